import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto'
import { InvalidParameterError } from '../errors.js'

/**
 * scrypt cost: N = 2^15, r = 8, p = 1 takes 32 MiB and about 0.4 s on a 2-core test machine (Node's
 * default is N = 2^14). The figures travel in each hash, so raising them later keeps old hashes valid.
 */
export interface ScryptCost {
  N: number
  r: number
  p: number
}
export const PASSWORD_HASH_COST: Readonly<ScryptCost> = Object.freeze({ N: 2 ** 15, r: 8, p: 1 })
const KEY_LENGTH = 32
const SALT_BYTES = 16

export const PASSWORD_MIN_LENGTH = 12
/** Bounds the work one sign-in request can ask of scrypt. */
export const PASSWORD_MAX_LENGTH = 1024

function derive(password: string, salt: Buffer, cost: ScryptCost, length: number): Promise<Buffer> {
  // Node refuses anything over 32 MiB by default, which N = 2^15, r = 8 needs plus a little.
  const options: ScryptOptions = { ...cost, maxmem: 256 * cost.N * cost.r }
  return new Promise((resolve, reject) =>
    scrypt(password.normalize('NFC'), salt, length, options, (error, key) => (error ? reject(error) : resolve(key))),
  )
}

/** Refuses passwords that are too short or too long, with a message for the person choosing one. */
export function checkNewPassword(password: string): void {
  const length = [...password].length
  if (length < PASSWORD_MIN_LENGTH) {
    throw new InvalidParameterError(`The password must have at least ${PASSWORD_MIN_LENGTH} characters.`)
  }
  if (length > PASSWORD_MAX_LENGTH) {
    throw new InvalidParameterError(`The password must have at most ${PASSWORD_MAX_LENGTH} characters.`)
  }
}

/**
 * `scrypt$N$r$p$<salt>$<hash>`, salt and hash in base64url. Only tests pass a lower `cost`, to
 * save the 0.4 s each hash would take them; verification reads the cost from the hash itself.
 */
export async function hashPassword(password: string, cost: Readonly<ScryptCost> = PASSWORD_HASH_COST): Promise<string> {
  const salt = randomBytes(SALT_BYTES)
  const hash = await derive(password, salt, cost, KEY_LENGTH)
  return ['scrypt', cost.N, cost.r, cost.p, salt.toString('base64url'), hash.toString('base64url')].join('$')
}

/** Whether `password` matches `stored`; compares in constant time. A malformed hash never matches. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$')
  if (scheme !== 'scrypt' || !n || !r || !p || !salt || !hash) return false
  const expected = Buffer.from(hash, 'base64url')
  if (expected.length === 0) return false
  const actual = await derive(password, Buffer.from(salt, 'base64url'), { N: Number(n), r: Number(r), p: Number(p) }, expected.length)
  return timingSafeEqual(actual, expected)
}
