import { randomBytes } from 'node:crypto'
import { Secret, TOTP } from 'otpauth'
import { renderSVG } from 'uqr'
import type { TwoFactorRepository } from '../db/repositories/two-factor-repository.js'
import { InvalidRequestError, TwoFactorFailedError } from '../errors.js'
import { sha256Hex } from '../lib/sha256-hex.js'
import { AuditTrail, type Actor } from './audit.js'
import type { TwoFactorSecretBox } from './two-factor-secret.js'

/** RFC 6238 as every authenticator app reads it: HMAC-SHA1, 6 digits, 30-second steps. */
const PERIOD_SECONDS = 30
const DIGITS = 6
/** Codes of the step before and after are accepted too: a phone's clock a little off, a code typed as it changes. */
const WINDOW = 1
/** 160 bits, RFC 4226's recommended length for an HMAC-SHA1 key. */
const SECRET_BYTES = 20
export const RECOVERY_CODE_COUNT = 10
const ISSUER = 'Fileshare'

const TOTP_CODE = /^\d{6}$/
/** xxxx-xxxx-xxxx-xxxx in lower-case base32 without 0/1/8/9 confusion: 80 random bits. */
const RECOVERY_CODE = /^[a-z2-7]{4}(-?[a-z2-7]{4}){3}$/
const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567'

/** What a holder types: spaces and dashes are forgiven ("123 456", "abcd efgh ..."), letter case too. */
function normalise(code: string): string {
  return code.trim().toLowerCase().replace(/\s+/g, '')
}

function newRecoveryCode(): string {
  const bytes = randomBytes(16)
  let code = ''
  for (let i = 0; i < 16; i++) code += BASE32[bytes[i]! & 31]
  return code.match(/.{4}/g)!.join('-')
}

/** A recovery code is stored as the SHA-256 of its 16 characters (dashes dropped). */
function recoveryCodeHash(code: string): string {
  return sha256Hex(code.replace(/-/g, ''))
}

export interface Enrolment {
  /** Base32, for typing into an app that cannot scan. */
  secret: string
  /** The otpauth:// URI the QR code holds. */
  uri: string
  /** The QR code as an SVG document (black modules on white), for an <img> with a data: URL. */
  qrSvg: string
}

/**
 * TOTP second factors (RFC 6238) of dashboard holders: enrolment with a code to confirm, ten
 * one-time recovery codes stored hashed, checking a code at sign-in (each time step accepted once:
 * no replay), regenerating codes, and turning it off. Rate limits of wrong codes are the sign-in
 * service's (sign-in.ts), which calls `check`.
 */
export class TwoFactorService {
  constructor(
    private readonly repository: TwoFactorRepository,
    private readonly box: TwoFactorSecretBox,
    private readonly trail: AuditTrail,
    private readonly now: () => number = Date.now,
  ) {}

  /** Whether it is on, and how many recovery codes are left. */
  async status(accountId: number): Promise<{ enabled: boolean; recoveryCodesLeft: number }> {
    const row = await this.repository.find(accountId)
    const enabled = row?.enabled_at != null
    return { enabled, recoveryCodesLeft: enabled ? await this.repository.recoveryCodesLeft(accountId) : 0 }
  }

  /** A new secret waiting for its first code (replacing one that waited); refused while a second factor is on. */
  async startEnrolment(accountId: number, email: string, now = this.now()): Promise<Enrolment> {
    // `size`, not `buffer: randomBytes(n).buffer`: a Buffer's .buffer may be a shared pool larger than the secret.
    const secret = new Secret({ size: SECRET_BYTES })
    const started = await this.repository.startEnrolment(accountId, this.box.seal(secret.base32, accountId), now)
    if (!started) throw new InvalidRequestError('Two-factor sign-in is on already; turn it off first to enrol another device.')
    const uri = this.totp(secret.base32, email).toString()
    return { secret: secret.base32, uri, qrSvg: renderSVG(uri, { ecc: 'M', border: 2 }) }
  }

  /**
   * Turns the waiting second factor on with its first code; returns the recovery codes (shown once).
   * Every other session of the account ends with it, as with a new password: they were opened
   * without a code (a thief's, maybe: why a holder turns it on), and once it is on nothing else
   * would tell them apart from sessions that gave one (FILESHARE_REQUIRE_TWO_FACTOR would open them
   * all). `keepSessionId`: the caller's session, which stays; absent (no session asks: the services
   * used directly), no session ends.
   */
  async confirmEnrolment(accountId: number, code: string, actor: Actor, keepSessionId?: string, now = this.now()): Promise<string[]> {
    const row = await this.repository.find(accountId)
    if (!row || row.enabled_at !== null) throw new InvalidRequestError('There is no enrolment to confirm; start again.')
    const step = this.matchingStep(this.box.open(row.secret, accountId), row.last_step, normalise(code), now)
    // Both tied to the secret checked here: an enrolment started again meanwhile (another tab) replaced it.
    if (step === undefined || !(await this.repository.acceptStep(accountId, step, false, row.secret))) throw new TwoFactorFailedError()
    const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode)
    const event = this.trail.row('two_factor.enabled', actor, {
      accountId,
      target: { type: 'account', id: accountId },
      details: { recovery_codes: RECOVERY_CODE_COUNT, ...(keepSessionId === undefined ? {} : { other_sessions_ended: true }) },
    })
    const keepTokenHash = keepSessionId === undefined ? undefined : sha256Hex(keepSessionId)
    // Of two confirmations racing (codes of two steps), one turns it on: the other's codes would be dead.
    if (!(await this.repository.enable(accountId, codes.map(recoveryCodeHash), now, event, { secret: row.secret, keepTokenHash }))) {
      throw new InvalidRequestError('There is no enrolment to confirm; start again.')
    }
    return codes
  }

  /**
   * Checks a second factor of an account that has one on: a current TOTP code (its step then used
   * up) or an unused recovery code (then used up, with its event). Undefined when neither.
   */
  async check(accountId: number, code: string, actor: Actor, now = this.now()): Promise<'totp' | 'recovery' | undefined> {
    const row = await this.repository.find(accountId)
    if (!row || row.enabled_at === null) return undefined
    const given = normalise(code)
    if (TOTP_CODE.test(given)) {
      const step = this.matchingStep(this.box.open(row.secret, accountId), row.last_step, given, now)
      return step !== undefined && (await this.repository.acceptStep(accountId, step, true)) ? 'totp' : undefined
    }
    if (RECOVERY_CODE.test(given)) {
      const used = await this.repository.useRecoveryCode(accountId, recoveryCodeHash(given), now, (left) =>
        this.trail.row('two_factor.recovery_code_used', actor, {
          accountId,
          target: { type: 'account', id: accountId },
          details: { recovery_codes_left: left },
        }),
      )
      return used ? 'recovery' : undefined
    }
    return undefined
  }

  /** Ten new recovery codes (the caller checked a code, sign-in.ts); the earlier ones stop working. */
  async regenerateRecoveryCodes(accountId: number, actor: Actor): Promise<string[]> {
    const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode)
    const event = this.trail.row('two_factor.recovery_codes_regenerated', actor, {
      accountId,
      target: { type: 'account', id: accountId },
      details: { recovery_codes: RECOVERY_CODE_COUNT },
    })
    await this.repository.replaceRecoveryCodes(accountId, codes.map(recoveryCodeHash), event)
    return codes
  }

  /** Turns it off (the caller checked the password and a code, sign-in.ts). */
  async disable(accountId: number, actor: Actor): Promise<void> {
    await this.repository.remove(
      accountId,
      this.trail.row('two_factor.disabled', actor, { accountId, target: { type: 'account', id: accountId } }),
    )
  }

  /** The operator's reset (a holder who lost both the device and the codes): whether there was one to remove. */
  async reset(accountId: number, actor: Actor): Promise<boolean> {
    return this.repository.remove(
      accountId,
      this.trail.row('two_factor.disabled', actor, { accountId, target: { type: 'account', id: accountId }, details: { by: 'operator' } }),
    )
  }

  /** The time step whose code `code` is, within the window and after `lastStep` (replay), else undefined. */
  private matchingStep(secret: string, lastStep: number, code: string, now: number): number | undefined {
    if (!TOTP_CODE.test(code)) return undefined
    const delta = this.totp(secret, '').validate({ token: code, timestamp: now, window: WINDOW })
    if (delta === null) return undefined
    const step = Math.floor(now / 1000 / PERIOD_SECONDS) + delta
    return step > lastStep ? step : undefined
  }

  private totp(secret: string, label: string): TOTP {
    return new TOTP({ issuer: ISSUER, label, algorithm: 'SHA1', digits: DIGITS, period: PERIOD_SECONDS, secret: Secret.fromBase32(secret) })
  }
}
