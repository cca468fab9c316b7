import { Writable } from "node:stream";

/** A log destination that keeps every JSON line in memory, for assertions. */
export class LogCapture extends Writable {
  readonly lines: Array<Record<string, unknown>> = [];

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: () => void): void {
    for (const line of chunk.toString("utf8").split("\n")) {
      if (line.trim()) this.lines.push(JSON.parse(line) as Record<string, unknown>);
    }
    callback();
  }

  /** Lines of one target. */
  forTarget(target: string): Array<Record<string, unknown>> {
    return this.lines.filter((line) => line.target === target);
  }
}
