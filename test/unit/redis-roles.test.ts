import { Redis } from 'ioredis';
import { createRedis } from '../../shared/redis/redis';

describe('createRedis', () => {
  it('sends a producer’s commands one by one, without auto-pipelining', () => {
    // Port 1: nothing listens; the options are what is checked, the client never gets ready.
    const producer = createRedis('redis://127.0.0.1:1', 'producer');
    try {
      expect(producer).toBeInstanceOf(Redis);
      expect(producer.options.enableAutoPipelining).toBe(false);
    } finally {
      producer.disconnect();
    }
  });
});
