/**
 * From a toggle in the console to the SDKs (issue 19, "Must show"), run by hand:
 *
 *   npx bun bench/run.ts console-propagation [--toggles 20] [--interval 1000]
 *
 * One server (100 flags), headless Chromium signed in to the console on the project page, and in
 * this process two official `unleash-client` SDKs with a client token for development: one
 * polling every `--interval` ms, one streaming (experimentalMode streaming). For each of
 * `--toggles` clicks on the switch "flag-0 in development", timed from the click:
 * - the console's answer (the toggle's response seen by the page);
 * - a poll made the moment the page has its answer (GET /api/client/features with the client
 *   token, as the SDK's next poll would be): whether it already holds the change, and when;
 * - the streaming SDK's copy showing the change;
 * - the polling SDK's copy showing it, and whether that was its first poll after the answer.
 * Prints p50/p99/max of each with the load average.
 */
import { parseArgs } from 'node:util'
import { chromium } from 'playwright-core'
import { InMemStorageProvider, Unleash } from 'unleash-client'
import { authHeaders, fmt, loadAverage, percentile, removeDir, seedDataDir, startServer, table, tempDataDir } from './lib'

const { values } = parseArgs({ options: { toggles: { type: 'string', default: '20' }, interval: { type: 'string', default: '1000' } } })
const TOGGLES = Number(values.toggles)
const INTERVAL = Number(values.interval)
const PASSWORD = 'Bench-admin-pass-1'
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
const FLAG = 'flag-0'
const POLL_MS = 20

const dir = tempDataDir('bench-propagation-')
seedDataDir(dir, { events: 100, flags: 100 })
const server = await startServer(dir, { UNLEASH_DEFAULT_ADMIN_PASSWORD: PASSWORD, LOG_LEVEL: 'warn' })
const { base } = server
const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu'] })
const clients: Unleash[] = []
try {
  const token = await fetch(`${base}/api/admin/api-tokens`, { method: 'POST', headers: authHeaders, body: JSON.stringify({ tokenName: 'bench-sdk', type: 'client', projects: ['*'], environment: 'development' }) })
  const secret = ((await token.json()) as { secret: string }).secret
  const sdk = (mode: 'polling' | 'streaming') => {
    const client = new Unleash({
      url: `${base}/api`,
      appName: `bench-${mode}`,
      customHeaders: { Authorization: secret },
      disableMetrics: true,
      refreshInterval: INTERVAL,
      storageProvider: new InMemStorageProvider(),
      ...(mode === 'streaming' ? { experimentalMode: { type: 'streaming' } as any } : {}),
    })
    clients.push(client)
    return client
  }
  const polling = sdk('polling')
  const streaming = sdk('streaming')
  await Promise.all([polling, streaming].map((client) => new Promise((resolve) => client.once('synchronized', resolve))))
  // Every poll result of the polling SDK, with when it arrived (changed or not).
  const polls: number[] = []
  const pollingRepository = (polling as any).repository
  pollingRepository.on('changed', () => polls.push(performance.now()))
  pollingRepository.on('unchanged', () => polls.push(performance.now()))

  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
  await page.goto(`${base}/`)
  await page.getByLabel('Username').fill('admin')
  await page.getByLabel('Password').fill(PASSWORD)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.getByRole('heading', { name: 'Projects' }).waitFor()
  await page.goto(`${base}/#/projects/default`)
  const toggle = page.getByRole('switch', { name: `${FLAG} in development` })
  await toggle.waitFor()

  /** Resolves with the time `client` holds `enabled` for the flag. */
  const holds = (client: Unleash, enabled: boolean) =>
    new Promise<number>((resolve) => {
      const repository = (client as any).repository
      const check = () => {
        if (repository.getToggle(FLAG)?.enabled === enabled) {
          repository.off('changed', check)
          resolve(performance.now())
        }
      }
      repository.on('changed', check)
      check()
    })

  const answered: number[] = []
  const rawPoll: number[] = []
  let rawPollHeld = 0
  const streamed: number[] = []
  const streamedAfterAnswer: number[] = []
  const polled: number[] = []
  let firstPollHeld = 0
  const load = loadAverage()
  for (let i = 0; i < TOGGLES; i++) {
    const enabled = !(await toggle.isChecked())
    const streamSeen = holds(streaming, enabled)
    const pollSeen = holds(polling, enabled)
    const response = page.waitForResponse((r) => r.url().includes(`/features/${FLAG}/environments/development/`) && r.request().method() === 'POST')
    const clicked = performance.now()
    await toggle.click()
    await (await response).finished()
    const answeredAt = performance.now()
    answered.push(answeredAt - clicked)
    // The next poll, made now: does it already hold the change?
    const poll = await fetch(`${base}/api/client/features`, { headers: { authorization: secret } })
    const features = ((await poll.json()) as { features: { name: string; enabled: boolean }[] }).features
    rawPoll.push(performance.now() - clicked)
    if (features.find((flag) => flag.name === FLAG)?.enabled === enabled) rawPollHeld++
    const streamAt = await streamSeen
    streamed.push(streamAt - clicked)
    streamedAfterAnswer.push(streamAt - answeredAt)
    const pollAt = await pollSeen
    polled.push(pollAt - clicked)
    // Its first poll made after the answer: the first result arriving more than POLL_MS after it
    // (a loopback poll of 100 flags takes a few ms; one arriving sooner may have been asked before).
    const firstAfter = polls.find((at) => at > answeredAt + POLL_MS)
    if (firstAfter !== undefined && pollAt <= firstAfter + 1) firstPollHeld++
    await Bun.sleep(50)
  }
  const row = (label: string, times: number[], extra = '') => {
    const sorted = [...times].sort((a, b) => a - b)
    return [label, `${fmt(percentile(sorted, 50))} ms`, `${fmt(percentile(sorted, 99))} ms`, `${fmt(sorted.at(-1)!)} ms`, extra]
  }
  console.log(`\n${TOGGLES} toggles of "${FLAG} in development" clicked in the console; polling SDK every ${INTERVAL} ms; load average ${load}\n`)
  console.log(
    table(
      ['from the click to', 'p50', 'p99', 'max', ''],
      [
        row('the console showing the API\'s answer', answered),
        row('a poll made at that moment holding the change', rawPoll, `${rawPollHeld}/${TOGGLES} held it`),
        row('the streaming SDK holding it', streamed),
        row('(from the console\'s answer to the streaming SDK holding it)', streamedAfterAnswer),
        row(`the polling SDK holding it (interval ${INTERVAL} ms)`, polled, `${firstPollHeld}/${TOGGLES} at its first poll after the answer`),
      ],
    ),
  )
} finally {
  for (const client of clients) client.destroy()
  await browser.close()
  await server.stop()
  removeDir(dir)
}
