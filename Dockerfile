# One image for every app role: api (default command), worker, dashboard and migrate (see docker-compose.yml).
FROM node:20-slim
WORKDIR /app

COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund

COPY tsconfig.json tsconfig.build.json ./
COPY api ./api
COPY dashboard ./dashboard
COPY worker ./worker
COPY cli ./cli
COPY shared ./shared
COPY scripts ./scripts
RUN npm run build && npm prune --omit=dev

ENV NODE_ENV=production
# Listen on every interface of the container (outside one the processes default to 127.0.0.1).
ENV HOST=0.0.0.0
USER node
EXPOSE 3000
CMD ["node", "--max-semi-space-size=64", "--initial-old-space-size=256", "dist/api/main.js"]
