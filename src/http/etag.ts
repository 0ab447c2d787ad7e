/** Whether an If-None-Match header names `etag` (a list, weak forms and `*` included). */
export function etagMatches(header: string | null, etag: string): boolean {
  if (header === null) return false
  // The usual header: the one ETag the client last had.
  if (header === etag) return true
  for (const part of header.split(',')) {
    const candidate = part.trim()
    if (candidate === '*' || candidate === etag || (candidate.startsWith('W/') && candidate.slice(2) === etag))
      return true
  }
  return false
}
