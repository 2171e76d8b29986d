/**
 * Reads the Redis protocol (RESP) a client sends and counts whole commands: a pipeline of five
 * commands in one TCP write is five, and a command split over several writes is one. A
 * command is an array of bulk strings (`*<n>\r\n` then n × `$<len>\r\n<bytes>\r\n`), or an inline
 * command (one line), as redis-server reads them.
 */
export class RespCommandReader {
  private buffer: Buffer = Buffer.alloc(0);

  /**
   * `onCommand` gets each whole command's name (upper case) and its arguments, in the order they
   * were sent.
   */
  constructor(private readonly onCommand: (name: string, args: string[]) => void) {}

  push(chunk: Buffer): void {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    for (;;) {
      const parsed = this.next();
      if (!parsed) return;
      this.onCommand(parsed.name.toUpperCase(), parsed.args);
      this.buffer = this.buffer.subarray(parsed.end);
    }
  }

  /** The first whole command in the buffer and where it ends, or null when it is not all there. */
  private next(): { name: string; args: string[]; end: number } | null {
    const lineEnd = this.buffer.indexOf('\r\n');
    if (lineEnd < 0) return null;
    const head = this.buffer.subarray(0, lineEnd).toString('latin1');
    if (!head.startsWith('*')) {
      const [name = '', ...args] = head.trim().split(/\s+/);
      return { name, args, end: lineEnd + 2 };
    }
    const count = Number(head.slice(1));
    if (!Number.isInteger(count) || count < 1) throw new Error(`not a RESP command: ${JSON.stringify(head)}`);
    let at = lineEnd + 2;
    const parts: string[] = [];
    for (let i = 0; i < count; i++) {
      const sizeEnd = this.buffer.indexOf('\r\n', at);
      if (sizeEnd < 0) return null;
      const sizeLine = this.buffer.subarray(at, sizeEnd).toString('latin1');
      if (!sizeLine.startsWith('$')) throw new Error(`not a RESP bulk string: ${JSON.stringify(sizeLine)}`);
      const start = sizeEnd + 2;
      const end = start + Number(sizeLine.slice(1));
      if (this.buffer.length < end + 2) return null;
      parts.push(this.buffer.subarray(start, end).toString('utf8'));
      at = end + 2;
    }
    const [name = '', ...args] = parts;
    return { name, args, end: at };
  }
}
