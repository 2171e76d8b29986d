// Set up for each test file of the `cluster` jest project: its test env (test-env.ts) runs the
// api, workers and CLI against the Redis Cluster instead of the single node.
process.env.COS_TEST_REDIS_MODE = 'cluster';
