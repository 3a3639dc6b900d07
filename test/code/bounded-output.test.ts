import { describe, expect, it } from 'vitest';
import { BoundedOutput, OutputTail } from '../../src/code/bounded-output.js';

describe('BoundedOutput', () => {
  it('keeps everything up to the limit', () => {
    const output = new BoundedOutput(10);
    expect(output.push(Buffer.from('hello'))).toBe(true);
    expect(output.push(Buffer.from('world'))).toBe(true);
    expect(output.bytes().toString()).toBe('helloworld');
  });

  it('drops everything and says so once the limit is passed, however the stream goes on', () => {
    const output = new BoundedOutput(10);
    output.push(Buffer.from('hello'));
    expect(output.push(Buffer.from('world!'))).toBe(false);
    expect(output.push(Buffer.from('x'))).toBe(false);
    expect(output.overflowed).toBe(true);
    expect(output.bytes().length).toBe(0);
  });
});

describe('OutputTail', () => {
  it('keeps the last bytes of a long stream', () => {
    const tail = new OutputTail(8);
    for (const part of ['Traceback ', 'line 1 ', 'ValueError: x']) tail.push(Buffer.from(part));
    expect(tail.text()).toBe('Error: x');
  });
});
