import { AppError } from '../../shared/errors/app-error';
import { isDependencyUnavailable, serviceUnavailable } from '../../shared/errors/unavailable';

describe('isDependencyUnavailable', () => {
  const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });

  it.each([
    ['a refused TCP connection', withCode('connect ECONNREFUSED 127.0.0.1:6379', 'ECONNREFUSED')],
    ['an AggregateError of refused connections (Node happy eyeballs)', Object.assign(new AggregateError([], ''), { code: 'ECONNREFUSED' })],
    ['ioredis "Connection is closed."', new Error('Connection is closed.')],
    ['ioredis with the offline queue disabled', new Error("Stream isn't writeable and enableOfflineQueue options is false")],
    [
      'ioredis max retries',
      new Error('Reached the max retries per request limit (which is 20). Refer to "maxRetriesPerRequest" option for details.'),
    ],
    ['pg connect timeout', new Error('timeout exceeded when trying to connect')],
    ['pg terminated connection', new Error('Connection terminated unexpectedly')],
    ['a pg client used after its connection failed', new Error('Client has encountered a connection error and is not queryable')],
    ['Postgres admin shutdown (57P01)', withCode('terminating connection due to administrator command', '57P01')],
    ['Postgres starting up', withCode('the database system is starting up', '57P03')],
    ['Redis out of memory (noeviction)', new Error("OOM command not allowed when used memory > 'maxmemory'.")],
    ['a Redis replica refusing writes', new Error("READONLY You can't write against a read only replica.")],
    ['a Redis Cluster without a master for a slot', new Error('CLUSTERDOWN The cluster is down')],
    ['a Redis Cluster slot in migration', new Error('TRYAGAIN Multiple keys request during rehashing of slot')],
    ['a Redis Cluster slot moved to a promoted replica', new Error('MOVED 2786 127.0.0.1:40643')],
    ['ioredis out of redirections', new Error('Too many Cluster redirections. Last error: Error: Connection is closed.')],
    ['ioredis Cluster before it is ready', new Error("Cluster isn't ready and enableOfflineQueue options is false")],
  ])('is true for %s', (_label, error) => {
    expect(isDependencyUnavailable(error)).toBe(true);
  });

  it.each([
    ['a plain Error("boom")', new Error('boom')],
    ['a SQL error', withCode('duplicate key value violates unique constraint', '23505')],
    ['an AppError', new AppError('VALIDATION_ERROR', 'bad')],
    ['a string mentioning ECONNREFUSED', 'ECONNREFUSED'],
    ['null', null],
  ])('is false for %s', (_label, error) => {
    expect(isDependencyUnavailable(error)).toBe(false);
  });

  it('serviceUnavailable is a 503 with Retry-After', () => {
    const error = serviceUnavailable();
    expect(error.statusCode).toBe(503);
    expect(error.code).toBe('SERVICE_UNAVAILABLE');
    expect(error.headers).toEqual({ 'Retry-After': '1' });
  });
});
