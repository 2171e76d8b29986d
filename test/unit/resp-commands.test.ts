import { RespCommandReader } from '../support/resp-commands';

const resp = (...args: string[]) => `*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`;

function read(...chunks: (string | Buffer)[]): string[] {
  const names: string[] = [];
  const reader = new RespCommandReader((name) => names.push(name));
  for (const chunk of chunks) reader.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
  return names;
}

describe('counting Redis commands from the protocol', () => {
  it('counts each command of a pipelined write, and a command split over writes once', () => {
    expect(read(resp('get', 'a') + resp('SET', 'b', 'x\r\ny') + resp('evalsha', 'abc', '0'))).toEqual(['GET', 'SET', 'EVALSHA']);
    const split = resp('HGETALL', 'key-with-a-long-name');
    expect(read(split.slice(0, 3), split.slice(3, 17), split.slice(17))).toEqual(['HGETALL']);
    expect(read(split.slice(0, -1))).toEqual([]);
  });

  it('reads binary arguments by length and inline commands by line', () => {
    const binary = Buffer.concat([Buffer.from('*2\r\n$3\r\nSET\r\n$4\r\n'), Buffer.from([0, 13, 10, 255]), Buffer.from('\r\n')]);
    expect(read(binary, 'PING\r\n', resp('MULTI') + resp('EXEC'))).toEqual(['SET', 'PING', 'MULTI', 'EXEC']);
  });

  it('hands over each command with its arguments', () => {
    const commands: string[][] = [];
    const reader = new RespCommandReader((name, args) => commands.push([name, ...args]));
    reader.push(Buffer.from(resp('set', 'k', 'vàlue\r\n') + 'PING hello\r\n'));
    expect(commands).toEqual([
      ['SET', 'k', 'vàlue\r\n'],
      ['PING', 'hello'],
    ]);
  });
});
