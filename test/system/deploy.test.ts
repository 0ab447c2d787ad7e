/**
 * The deployment files, checked as far as this machine can: there is no Docker daemon here, so the
 * Dockerfile is held to what the tested executable is (the same build script, its output, the
 * commands the program really has); the systemd unit is parsed by `systemd-analyze verify` where it
 * is installed, and its settings agree with the program's.
 */
import { expect, test } from 'bun:test'
import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseCommand } from '../../src/cli'
import { readConfig } from '../../src/config'
import { tempDir } from '../helpers/files'
import { needs, TOOLS } from '../tools'

const ROOT = join(import.meta.dir, '../..')
const read = (name: string) => Bun.file(join(ROOT, name)).text()
const packageJson = await Bun.file(join(ROOT, 'package.json')).json()

/** Dockerfile instructions, continuation lines joined, comments dropped. */
function instructions(text: string): { op: string; args: string }[] {
  return text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map(line => line.trim())
    .filter(line => line !== '' && !line.startsWith('#'))
    .map(line => ({
      op: line.split(/\s+/, 1)[0].toUpperCase(),
      args: line.slice(line.split(/\s+/, 1)[0].length).trim(),
    }))
}

test('the Dockerfile builds the executable with the build script the executable test runs, and runs it as a non-root user with data on a volume', async () => {
  const steps = instructions(await read('Dockerfile'))
  const stages = steps.filter(step => step.op === 'FROM')
  expect(stages).toHaveLength(2)
  expect(stages[0].args).toMatch(/ AS build$/)
  const build = steps.slice(0, steps.indexOf(stages[1]))
  const run = steps.slice(steps.indexOf(stages[1]))

  // Stage one: npm ci from the lock file, then `npm run build`: the package's build script, which
  // test/system/executable.test.ts runs and tests; its --outfile is what stage two copies.
  expect(build.map(step => step.op === 'RUN' && step.args).filter(Boolean)).toEqual([
    'npm ci --no-audit --no-fund',
    'npm run build && mkdir -p /out/data && cp dist/flagstore /out/flagstore',
  ])
  expect(packageJson.scripts.build).toMatch(/^bun build --compile .* --outfile dist\/flagstore$/)
  for (const step of build.filter(step => step.op === 'COPY')) {
    for (const source of step.args.split(/\s+/).slice(0, -1))
      expect({ source, exists: existsSync(join(ROOT, source)) }).toEqual({ source, exists: true })
  }
  // Everything the build reads is sent to Docker; bulky or secret things are not.
  const ignored = (await read('.dockerignore'))
    .split('\n')
    .map(line => line.trim())
    .filter(line => line && !line.startsWith('#'))
  for (const needed of ['package.json', 'package-lock.json', 'tsconfig.json', 'src'])
    expect(ignored).not.toContain(needed)
  for (const kept of ['node_modules', 'data', 'dist', '.git']) expect(ignored).toContain(kept)

  // Stage two: the executable alone, a numeric non-root user, DATA_DIR on a volume it owns.
  const arg = (op: string) => run.filter(step => step.op === op).map(step => step.args)
  expect(arg('COPY')).toEqual([
    '--from=build /out/flagstore /usr/local/bin/flagstore',
    '--from=build --chown=10001:10001 /out/data /data',
  ])
  expect(arg('USER')).toEqual(['10001:10001'])
  expect(arg('RUN').join(' ')).toContain('--uid 10001')
  expect(arg('ENV').join(' ')).toContain('DATA_DIR=/data')
  expect(arg('VOLUME')).toEqual(['["/data"]'])
  expect(arg('STOPSIGNAL')).toEqual(['SIGTERM'])
  const env = Object.fromEntries(
    arg('ENV')
      .join(' ')
      .split(/\s+/)
      .map(pair => pair.split('=')),
  )
  expect(readConfig(env, '/')).toMatchObject({ dataDir: '/data', port: Number(arg('EXPOSE')[0]), host: '0.0.0.0' })

  // The health check and the command are commands the program has (no curl in the image).
  const healthcheck = arg('HEALTHCHECK')[0]
  const command = JSON.parse(healthcheck.slice(healthcheck.indexOf('CMD ') + 4)) as string[]
  expect(command[0]).toBe('/usr/local/bin/flagstore')
  expect(parseCommand(command.slice(1))).toEqual({ name: 'healthcheck' })
  expect(JSON.parse(arg('ENTRYPOINT')[0])).toEqual(['/usr/local/bin/flagstore'])
  expect(parseCommand(JSON.parse(arg('CMD')[0]))).toEqual({ name: 'serve' })
})

/** `Key=value` lines of a unit file, by key (a key may repeat). */
function unitSettings(text: string): Map<string, string[]> {
  const settings = new Map<string, string[]>()
  for (const line of text.split('\n')) {
    const match = /^([A-Za-z]+)=(.*)$/.exec(line.trim())
    if (match) settings.set(match[1], [...(settings.get(match[1]) ?? []), match[2]])
  }
  return settings
}

test('the systemd unit runs `serve` hardened in its own state directory, restarts on failure and stops with SIGTERM in time', async () => {
  const unit = await read('deploy/flagstore.service')
  const settings = unitSettings(unit)
  const one = (key: string) => {
    expect({ key, values: settings.get(key)?.length }).toEqual({ key, values: 1 })
    return settings.get(key)![0]
  }
  const exec = one('ExecStart').split(' ')
  expect(parseCommand(exec.slice(1))).toEqual({ name: 'serve' })
  expect(one('DynamicUser')).toBe('yes')
  expect(one('StateDirectory')).toBe('flagstore')
  // DATA_DIR is the state directory (%S is /var/lib).
  const environment = Object.fromEntries((settings.get('Environment') ?? []).map(pair => pair.split('=')))
  expect(environment.DATA_DIR).toBe(`%S/${one('StateDirectory')}`)
  expect(readConfig(environment)).toMatchObject({ port: 4242, host: '127.0.0.1' })
  expect(one('Restart')).toBe('on-failure')
  expect(one('KillSignal')).toBe('SIGTERM')
  expect(one('TimeoutStopSec')).toMatch(/^\d+s$/)
  for (const key of ['NoNewPrivileges', 'ProtectHome', 'PrivateTmp', 'PrivateDevices', 'RestrictSUIDSGID'])
    expect({ key, value: one(key) }).toEqual({ key, value: 'yes' })
  expect(one('ProtectSystem')).toBe('strict')
  expect(one('CapabilityBoundingSet')).toBe('')
  // The JIT needs writable-executable memory: this setting would kill the service at start.
  expect(settings.has('MemoryDenyWriteExecute')).toBe(false)
})

needs(TOOLS.systemdAnalyze).test('systemd-analyze verify parses the unit without a complaint', async () => {
  const dir = tempDir('unit-')
  try {
    // verify checks that ExecStart's program exists: a stand-in takes its place.
    const text = await read('deploy/flagstore.service')
    const stand = join(dir.path, 'flagstore')
    writeFileSync(stand, '#!/bin/sh\n', { mode: 0o755 })
    const path = join(dir.path, 'flagstore.service')
    const runnable = text.replaceAll('/usr/local/bin/flagstore', stand)
    writeFileSync(path, runnable)
    const result = Bun.spawnSync([Bun.which('systemd-analyze')!, 'verify', '--man=no', path], { timeout: 30_000 })
    expect({ code: result.exitCode, output: result.stdout.toString() + result.stderr.toString() }).toEqual({
      code: 0,
      output: '',
    })
    // And it does complain about a broken one, so the silence above means something.
    writeFileSync(path, runnable.replace(/^Restart=on-failure$/m, 'Restart=sometimes'))
    const broken = Bun.spawnSync([Bun.which('systemd-analyze')!, 'verify', '--man=no', path], { timeout: 30_000 })
    expect(broken.stdout.toString() + broken.stderr.toString()).toContain('restart specifier')
  } finally {
    dir.remove()
  }
})
