/**
 * The log's output never stops the service: a standard output whose reader does not read (a paused
 * terminal, a stuck log shipper) costs log lines at worst, never answers. src/log.ts.
 */
import { afterAll, expect, test } from 'bun:test'
import { closeSync, constants, openSync, readSync } from 'node:fs'
import { join } from 'node:path'
import { LogOutput } from '../../src/log'
import { tempDir } from '../helpers/files'
import { freePort, untilReady, waitFor } from '../helpers/processes'

const ROOT = join(import.meta.dir, '../..')
const dir = tempDir('log-output-')
afterAll(() => dir.remove())

test('a standard output nobody reads for a while: every request is answered, and its lines come once it is read', async () => {
  // A named pipe whose reading end is open (so that the server can open its end) but not read: its
  // 64 KiB buffer fills after a few hundred request lines, and a write to it then waits.
  const fifo = join(dir.path, 'stdout')
  expect(Bun.spawnSync(['mkfifo', fifo]).exitCode).toBe(0)
  const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK)
  const writer = openSync(fifo, 'w')
  const port = freePort()
  const base = `http://127.0.0.1:${port}`
  const server = Bun.spawn([process.execPath, 'src/main.ts'], {
    cwd: ROOT,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: join(dir.path, 'data') },
    stdout: writer,
    stderr: 'ignore',
  })
  closeSync(writer)
  try {
    await untilReady(base, { process: server })
    // About 2,000 request lines: eight times the pipe's buffer. Each answer must come within 2 s.
    const REQUESTS = 2000
    for (let i = 0; i < REQUESTS; i += 20) {
      const batch = Array.from({ length: 20 }, () =>
        fetch(`${base}/health`, { signal: AbortSignal.timeout(2000) }).then(r => r.status),
      )
      expect(await Promise.all(batch)).toEqual(Array(20).fill(200))
    }
    // Now read: the lines that waited come out, none lost at this volume.
    let text = ''
    const buffer = Buffer.alloc(1 << 16)
    const healthLines = () => text.split('\n').filter(line => line.includes('"route":"/health"')).length
    await waitFor(() => {
      for (;;) {
        let read = 0
        try {
          read = readSync(reader, buffer, 0, buffer.length, null)
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code === 'EAGAIN') break
          throw error
        }
        if (read === 0) break
        text += buffer.toString('utf8', 0, read)
      }
      return healthLines() >= REQUESTS
    }, 'the request lines to be read')
    expect(healthLines()).toBe(REQUESTS)
    expect(text).not.toContain('log lines dropped')
    server.kill('SIGTERM')
    expect(await server.exited).toBe(0)
  } finally {
    if (server.exitCode === null) server.kill('SIGKILL')
    await server.exited
    closeSync(reader)
  }
})

/** A LogOutput whose writes complete only when the test lets them, each one's bytes recorded. */
function heldOutput(maxWaitingBytes: number) {
  const written: { fd: number; text: string }[] = []
  const held: (() => void)[] = []
  const output = new LogOutput({
    maxWaitingBytes,
    write: (fd, bytes, offset, done) => {
      held.push(() => {
        // Half of what is asked at most, as a pipe may take: the rest is written after.
        const length = Math.max(1, Math.ceil((bytes.length - offset) / 2))
        written.push({ fd, text: Buffer.from(bytes.subarray(offset, offset + length)).toString() })
        done(null, length)
      })
    },
    droppedLine: count => `dropped ${count}`,
  })
  const release = async () => {
    while (held.length > 0) held.shift()!()
    await Bun.sleep(0)
  }
  const text = (fd: number) =>
    written
      .filter(w => w.fd === fd)
      .map(w => w.text)
      .join('')
  return { output, written, release, text }
}

test('lines wait while a write is under way, in order across both outputs; past the bound they are dropped and counted', async () => {
  const { output, written, release, text } = heldOutput(33)
  output.add(1, 'a1\n')
  output.add(1, 'a2\n')
  output.add(2, 'w1\n')
  output.add(1, 'a3\n')
  // 3 bytes are being written and 9 wait: the 21 of the next fit exactly; c1, c2 and w2 do not.
  output.add(1, `${'b'.repeat(20)}\n`)
  output.add(1, 'c1\nc2\n')
  output.add(2, 'w2\n')
  let drained = false
  void output.whenDrained().then(() => (drained = true))
  for (let i = 0; i < 40 && !drained; i++) await release()
  expect(drained).toBe(true)
  expect(text(1)).toBe(`a1\na2\na3\n${'b'.repeat(20)}\n`)
  // The warning about the three lines lost comes after everything that waited.
  expect(text(2)).toBe('w1\ndropped 3\n')
  const order = written.map(w => w.text).join('')
  expect(order.indexOf('w1')).toBeGreaterThan(order.indexOf('a2'))
  expect(order.indexOf('w1')).toBeLessThan(order.indexOf('a3'))
  expect(order.indexOf('dropped')).toBeGreaterThan(order.indexOf('b'))
  // Once drained, lines are taken again.
  output.add(1, 'd\n')
  for (let i = 0; i < 5; i++) await release()
  expect(text(1)).toEndWith('d\n')
})

test('at exit the last lines are written at once, unless a write is under way', async () => {
  const atExit: string[] = []
  const record = (fd: number, text: string) => atExit.push(`${fd}:${text}`)
  const idle = heldOutput(1000)
  idle.output.writeAtExit(1, 'last\n', record)
  expect(atExit).toEqual(['1:last\n'])
  const busy = heldOutput(1000)
  busy.output.add(1, 'first\n')
  // The first is being written and not done: the exit does not wait on an output that may not take it.
  busy.output.writeAtExit(1, 'last\n', record)
  expect(atExit).toEqual(['1:last\n'])
})
