import express from 'express';
import { HOST } from './processes';

/**
 * bench:load's baseline, run as its own single process: a bare Express 5 app with
 * `express.json()` and one JSON POST handler, on 127.0.0.1:$PORT.
 */
const app = express();
app.use(express.json());
app.post('/bare', (req, res) => {
  res.json({ ok: true, userId: (req.body as { userId?: string } | undefined)?.userId ?? null });
});
const server = app.listen(Number(process.env.PORT), HOST);
process.on('SIGTERM', () => server.close(() => process.exit(0)));
