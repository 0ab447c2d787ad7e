/**
 * Headers that keep the service's pages from being framed, sniffed or leaking their URLs, set in
 * one place: `nosniff` on every answer, and on every answer whose content type is HTML (the console,
 * Swagger UI, any page added later) a Content-Security-Policy that allows only this origin's own
 * scripts, styles and calls, and no framing. The pages load nothing from elsewhere and run no inline
 * script (Swagger UI's start-up is a file of its own).
 */
import { createHash } from 'node:crypto'
import { Elysia } from 'elysia'

/**
 * The one inline style the pages hold: Swagger UI's top bar draws its logo as an SVG with this
 * `<style>` element. Allowed by its hash, so exactly this text and nothing else; a Swagger UI whose
 * logo differs shows a violation in test/system/browser.test.ts.
 */
const SWAGGER_LOGO_STYLE = '.logo_small_svg__cls-2{fill:#fff}.logo_small_svg__cls-3{fill:#85ea2d}'
const styleHash = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`

export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  `style-src 'self' ${styleHash(SWAGGER_LOGO_STYLE)}`,
  // Swagger UI's stylesheet draws its icons as data: URLs; the console's icon is `data:,`.
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ')

/** Every HTML answer's headers (X-Frame-Options for browsers that do not read frame-ancestors). */
export const HTML_PAGE_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
}

const isHtml = (response: Response) => /^text\/html\b/i.test(response.headers.get('content-type') ?? '')

export function securityHeaders() {
  return new Elysia({ name: 'security-headers' })
    .onRequest(({ set }) => {
      set.headers['x-content-type-options'] = 'nosniff'
    })
    .onAfterHandle({ as: 'global' }, ({ response }) => {
      if (!(response instanceof Response) || !isHtml(response)) return
      for (const name in HTML_PAGE_HEADERS) response.headers.set(name, HTML_PAGE_HEADERS[name])
    })
}
