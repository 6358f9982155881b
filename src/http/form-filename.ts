/**
 * The file name a multipart/form-data client meant. Browsers, curl, Python's requests and PHP
 * follow the HTML standard's form encoding, which sends `"` as `%22` and CR and LF as `%0D` and
 * `%0A` in the `filename` parameter, without escaping `%` itself. So a name with a quote arrives
 * as `quote%22d.txt`: decode these three escapes (exactly as written, upper case), nothing else.
 * A name that really contains the text `%22` is rare; it comes back as `"` (the trade-off is
 * documented in docs/api.md). CR and LF are then dropped with the other control characters.
 */
export function decodeFormFilename(filename: string | undefined): string | undefined {
  return filename?.replace(/%22|%0D|%0A/g, (escape) => ({ '%22': '"', '%0D': '\r', '%0A': '\n' })[escape]!)
}
