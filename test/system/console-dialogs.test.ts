/**
 * Every modal of the console (the command palette, Modal, ConfirmDialog) has one open state, its
 * component's: closed by Escape and opened again at once, it stays open. The browser delivers a
 * closed dialog's `close` event as a task of its own, and under load a key pressed meanwhile goes
 * first; an old `close` event arriving after the dialog was shown again must not close it. The
 * tests make that order certain (the reopening runs right after the dialog's close(), before its
 * event), and also press the keys for real, round after round.
 */
import { expect } from 'bun:test'
import type { Page } from 'playwright-core'
import { withChromium } from './chromium'
import { accessible, eventually, signIn, useConsoleBrowser } from './console-browser'

const SECRET = '*:*.console-dialogs-admin-secret-0123456789'
const PASSWORD = 'Dialogs-admin-pass-1'

const under = useConsoleBrowser(SECRET, PASSWORD, async () => {
  expect((await admin('POST', '/api/admin/projects', { id: 'shop', name: 'shop' })).status).toBe(201)
  expect((await admin('POST', '/api/admin/tag-types', { name: 'doomed-tag' })).status).toBe(201)
})
const admin = under.call

async function open(theme: 'light' | 'dark') {
  const context = await under.browser.newContext({ viewport: { width: 1280, height: 844 }, colorScheme: theme })
  const page = await context.newPage()
  const problems: string[] = []
  page.on('pageerror', error => problems.push(`page error: ${error.message}`))
  await signIn(page, under.base, 'admin', PASSWORD)
  return { page, problems, close: () => context.close() }
}

/**
 * The next close() of a <dialog> in the page is followed at once, before its `close` event, by
 * Ctrl-K or by a click on the button named `button`: the order a fast second key gets under load.
 */
function reopenBeforeCloseEvent(page: Page, button?: string) {
  return page.evaluate(button => {
    const close = HTMLDialogElement.prototype.close
    HTMLDialogElement.prototype.close = function (this: HTMLDialogElement, ...args: [string?]) {
      HTMLDialogElement.prototype.close = close
      close.apply(this, args)
      queueMicrotask(() => {
        if (button === undefined) dispatchEvent(new KeyboardEvent('keydown', { key: 'k', ctrlKey: true }))
        else [...document.querySelectorAll('button')].find(element => element.textContent?.trim() === button)?.click()
      })
    }
  }, button)
}

withChromium.test(
  'the command palette closed by Escape and opened again by Ctrl-K at once stays open, its input focused, in both themes, round after round',
  async () => {
    for (const theme of ['light', 'dark'] as const) {
      const { page, problems, close } = await open(theme)
      const palette = page.getByRole('dialog', { name: 'Command palette' })
      const input = palette.getByRole('combobox', { name: 'Find a flag or page' })
      const focused = () => input.evaluate(element => element === document.activeElement).catch(() => false)
      await page.keyboard.press('Control+k')
      await palette.waitFor()
      await reopenBeforeCloseEvent(page)
      await page.keyboard.press('Escape')
      await page.waitForTimeout(300)
      expect(await palette.isVisible()).toBe(true)
      await eventually(focused, true)
      // And by real keys, Escape and Ctrl-K in quick succession.
      for (let round = 0; round < 15; round++) {
        await page.keyboard.press('Escape')
        await page.keyboard.press('Control+k')
        await page.keyboard.type('tag')
        await palette.getByRole('option', { name: /Tag types/ }).waitFor({ timeout: 5000 })
        expect(await focused()).toBe(true)
      }
      await accessible(page, `command palette (${theme})`)
      await page.keyboard.press('Escape')
      await palette.waitFor({ state: 'hidden' })
      // Closed, it opens again: the state and the element agree.
      await page.keyboard.press('Control+k')
      await palette.waitFor()
      expect(problems).toEqual([])
      await close()
    }
  },
  90_000,
)

withChromium.test(
  'a Modal closed by Escape and opened again at once stays open and creates the flag',
  async () => {
    const { page, problems, close } = await open('light')
    await page.goto(`${under.base}/#/projects/shop`)
    await page.getByRole('button', { name: 'New flag' }).first().click()
    const dialog = page.getByRole('dialog', { name: 'New flag in shop' })
    await dialog.waitFor()
    await reopenBeforeCloseEvent(page, 'New flag')
    await page.keyboard.press('Escape')
    await page.waitForTimeout(300)
    expect(await dialog.isVisible()).toBe(true)
    await dialog.getByLabel('Flag name').fill('kept-open')
    await dialog.getByRole('button', { name: 'Create flag' }).click()
    await dialog.waitFor({ state: 'hidden' })
    expect((await admin('GET', '/api/admin/projects/shop/features/kept-open')).status).toBe(200)
    expect(problems).toEqual([])
    await close()
  },
  60_000,
)

withChromium.test(
  'a confirmation cancelled by Escape and asked again at once stays open, and its answer is the second one',
  async () => {
    const { page, problems, close } = await open('dark')
    await page.goto(`${under.base}/#/tag-types`)
    await page.getByRole('button', { name: 'Delete doomed-tag' }).click()
    const dialog = page.getByRole('dialog', { name: 'Delete tag type doomed-tag?' })
    await dialog.waitFor()
    await reopenBeforeCloseEvent(page, 'Delete doomed-tag')
    await page.keyboard.press('Escape')
    await page.waitForTimeout(300)
    expect(await dialog.isVisible()).toBe(true)
    expect((await admin('GET', '/api/admin/tag-types/doomed-tag')).status).toBe(200)
    await dialog.getByRole('button', { name: 'Delete tag type' }).click()
    await dialog.waitFor({ state: 'hidden' })
    await eventually(async () => (await admin('GET', '/api/admin/tag-types/doomed-tag')).status, 404)
    expect(problems).toEqual([])
    await close()
  },
  60_000,
)
