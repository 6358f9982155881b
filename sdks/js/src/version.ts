/** The SDK's version; a test checks that it matches package.json. */
export const VERSION = '0.2.0'

/** The user agent sent where the platform allows it (Node; browsers forbid setting User-Agent). */
export const USER_AGENT = `fileshare-sdk-js/${VERSION}`
