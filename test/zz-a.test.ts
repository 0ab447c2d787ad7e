import { beforeAll, test } from 'bun:test'
beforeAll(async () => { await Bun.sleep(5500) })
test('a sleeps 6s', async () => { await Bun.sleep(6000) })
