/**
 * The page of test/system/ofrep-browser.test.ts, bundled for Chromium: the web SDK with the OFREP
 * web provider as an application would use them, with the browser's own fetch and EventSource.
 * What the test reads is left on `window.flags`.
 */
import { OFREPWebProvider } from '@openfeature/ofrep-web-provider'
import { OpenFeature, ProviderEvents } from '@openfeature/web-sdk'

interface Flags {
  changes: string[][]
  value(name: string): boolean
  start(baseUrl: string, token: string): Promise<void>
}

const flags: Flags = {
  changes: [],
  value: name => OpenFeature.getClient().getBooleanValue(name, false),
  async start(baseUrl, token) {
    await OpenFeature.setContext({ targetingKey: 'browser-user' })
    // pollInterval 0: the provider never polls; only the event stream can tell it of a change.
    await OpenFeature.setProviderAndWait(
      new OFREPWebProvider({ baseUrl, headers: [['X-API-Key', token]], pollInterval: 0, cacheMode: 'disabled' }),
    )
    OpenFeature.getClient().addHandler(ProviderEvents.ConfigurationChanged, details =>
      flags.changes.push(details?.flagsChanged ?? []),
    )
  },
}
;(window as unknown as { flags: Flags }).flags = flags
