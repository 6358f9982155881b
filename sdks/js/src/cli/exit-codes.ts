// The exit codes of `fshare`: 0 ok, 1 generic, 2 usage, then one per SDK error class.
// The table below is the documented contract (README "CLI", `fshare --help`): scripts rely on it,
// so a code, once given, never changes meaning.
import {
  APIConnectionError,
  AuthenticationError,
  BadRequestError,
  ConfigurationError,
  IntegrityError,
  LimitExceededError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
  ServerError,
} from '../errors.js'

/** A command line `fshare` cannot run: unknown command or option, missing or malformed argument. */
export class UsageError extends Error {
  override readonly name = 'UsageError'
}

/** The run was stopped by SIGINT/SIGTERM (Ctrl-C). */
export class InterruptedError extends Error {
  override readonly name = 'InterruptedError'
}

export interface ExitCodeEntry {
  readonly code: number
  /** The error class (or `ok`, `error`, `usage`, `interrupted`). */
  readonly name: string
  readonly meaning: string
}

type ErrorClass = abstract new (...args: never[]) => Error

/** Every exit code, in order. The SDK classes come in the order of the SDK's error table. */
export const EXIT_CODES = [
  { code: 0, name: 'ok', meaning: 'success (for several FILEs/IDs: every one succeeded)' },
  { code: 1, name: 'error', meaning: 'any other error: a local file that cannot be read or written, an unexpected answer' },
  { code: 2, name: 'usage', meaning: 'bad command line: unknown command or option, missing or malformed argument' },
  { code: 3, name: 'AuthenticationError', meaning: '401: missing, unknown, revoked or expired key' },
  {
    code: 4,
    name: 'PermissionDeniedError',
    meaning: "403: the account's plan has no API access, the key lacks the scope the call needs, or it may not be used from this address",
  },
  {
    code: 5,
    name: 'LimitExceededError',
    meaning: 'file larger than max_file_size, daily uploads used up, storage quota full, too many links, a file too large to virus-scan',
  },
  { code: 6, name: 'NotFoundError', meaning: '404: no such file (or not this account\u2019s), no file behind a link' },
  { code: 7, name: 'BadRequestError', meaning: 'any other 4xx: the server refused the request as it is' },
  { code: 8, name: 'RateLimitError', meaning: '429: request rate limit (after the retries)' },
  { code: 9, name: 'ServerError', meaning: '5xx (after the retries)' },
  { code: 10, name: 'APIConnectionError', meaning: 'no answer: connection refused or dropped, idle timeout' },
  { code: 11, name: 'IntegrityError', meaning: 'SHA-256 mismatch of an upload or a download' },
  { code: 12, name: 'ConfigurationError', meaning: 'no base URL or key, a malformed base URL, a server without resumable uploads' },
  { code: 130, name: 'interrupted', meaning: 'stopped by Ctrl-C or SIGTERM (a partial download can be resumed)' },
] as const satisfies readonly ExitCodeEntry[]

const CLASSES: readonly [ErrorClass, number][] = [
  [AuthenticationError, 3],
  [PermissionDeniedError, 4],
  [LimitExceededError, 5],
  [NotFoundError, 6],
  [BadRequestError, 7],
  [RateLimitError, 8],
  [ServerError, 9],
  [APIConnectionError, 10],
  [IntegrityError, 11],
  [ConfigurationError, 12],
  [UsageError, 2],
  [InterruptedError, 130],
]

export const EXIT_OK = 0
export const EXIT_ERROR = 1
export const EXIT_USAGE = 2
export const EXIT_INTERRUPTED = 130

/** The exit code for an error: its class's code, else 1. */
export function exitCodeFor(error: unknown): number {
  for (const [type, code] of CLASSES) if (error instanceof type) return code
  return EXIT_ERROR
}

/** The name shown for an error: its class (`NotFoundError`), or `Error` for anything unexpected. */
export function errorTypeName(error: unknown): string {
  for (const [type] of CLASSES) if (error instanceof type) return type.name
  if (error instanceof Error && error.name && error.name !== 'Error') return error.name
  return 'Error'
}
