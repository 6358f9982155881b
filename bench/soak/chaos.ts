import { createHash, randomBytes } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { readProcessStatus } from '../../test/helpers/server-process.js'
import type { Account } from './accounts.js'
import type { PrivateBackend } from './private-backends.js'
import type { Instance, ScaleOutStack } from './scale-out-stack.js'

/*
 * The faults of the chaos soak, one after another: one instance killed with SIGKILL and started
 * again, then PostgreSQL, Redis and S3 each frozen (SIGSTOP of their whole process group, so that
 * connections hang instead of being refused) and thawed. After each restore a probe asks both
 * instances directly, until each is whole again: ready, a request with a key, an upload and its
 * download.
 */

export type FaultKind = 'PostgreSQL' | 'Redis' | 'S3' | 'kill -9'

export interface Fault {
  kind: FaultKind
  /** What it was done to: the backend, or the instance killed. */
  target: string
  /** ms since the epoch: frozen (or killed) and thawed (or restarted and ready). */
  startedAt: number
  endedAt: number
  /** From the restore until both instances served every probe: ms, or undefined if they never did within the probe's limit. */
  recoveryMs: number | undefined
  /** Why the last probe round before recovery failed (for the report). */
  lastProbeFailure: string | undefined
}

export interface ChaosPlan {
  /** Seconds after the load started, for each fault, in order. */
  at: Array<{ kind: FaultKind; atSeconds: number }>
  cutSeconds: number
  /** How long the killed instance stays down before it is started again. */
  killDownSeconds: number
}

/**
 * The faults spread over the first half of the load (10%, 20%, 30%, 40%), so that the second half
 * shows the steady state after them. The kill comes first: the instance started again has warmed up
 * long before the second half, whose RSS trend is judged.
 */
export function chaosPlan(loadSeconds: number, cutSeconds: number): ChaosPlan {
  const kinds: FaultKind[] = ['kill -9', 'PostgreSQL', 'Redis', 'S3']
  return {
    at: kinds.map((kind, index) => ({ kind, atSeconds: Math.round(loadSeconds * 0.1 * (index + 1)) })),
    cutSeconds,
    killDownSeconds: 5,
  }
}

/** How long after a restore the service must be whole again. */
export const RECOVERY_LIMIT_MS = 10_000
/** The probe gives up after this long (the fault is then reported as not recovered). */
const PROBE_LIMIT_MS = 120_000

/** RSS of every instance over the run, through restarts: one series per process. */
export class InstanceWatch {
  readonly samples: Array<{ at: number; instance: string; pid: number; rssBytes: number }> = []
  private timer: NodeJS.Timeout | undefined

  constructor(private readonly instances: () => Instance[]) {}

  take(): void {
    const at = Date.now()
    for (const instance of this.instances()) {
      try {
        const { rssBytes } = readProcessStatus(instance.pid)
        this.samples.push({ at, instance: instance.name, pid: instance.pid, rssBytes })
      } catch {
        // killed, or not started again yet
      }
    }
  }

  start(everyMs: number): void {
    this.timer = setInterval(() => this.take(), everyMs)
  }

  stop(): void {
    clearInterval(this.timer)
  }
}

/** One probe round against one instance, directly (not through nginx); undefined when all of it worked, else what failed. */
async function probeInstance(instance: Instance, account: Account): Promise<string | undefined> {
  const timeout = () => AbortSignal.timeout(15_000)
  try {
    const ready = await fetch(`${instance.url}/readyz`, { signal: timeout() })
    await ready.arrayBuffer()
    if (ready.status !== 200) return `${instance.name}: /readyz ${ready.status}`
    const headers = { authorization: `Bearer ${account.apiKey}` }
    const stats = await fetch(`${instance.url}/api/v1/stats`, { headers, signal: timeout() })
    await stats.arrayBuffer()
    if (stats.status !== 200) return `${instance.name}: GET /stats ${stats.status}`
    const seed = randomBytes(16)
    const content = Buffer.concat([seed, randomBytes(1000)])
    const form = new FormData()
    form.append('file', new Blob([content]), `probe-${instance.name}.bin`)
    const uploaded = await fetch(`${instance.url}/api/v1/files/upload`, { method: 'POST', headers, body: form, signal: timeout() })
    const body = (await uploaded.json().catch(() => ({}))) as { file_id?: number; public_link?: string; sha256?: string }
    if (uploaded.status !== 201 || body.file_id === undefined || !body.public_link) return `${instance.name}: upload ${uploaded.status}`
    const sha256 = createHash('sha256').update(content).digest('hex')
    account.uploads++
    const downloadPath = new URL(body.public_link).pathname
    // The probe's files are checked at the end like the load's: their bytes are kept, not regenerated.
    account.files.set(body.file_id, {
      fileId: body.file_id,
      seed: Buffer.alloc(16),
      size: content.length,
      sha256,
      filename: `probe-${instance.name}.bin`,
      downloadPath,
      countedDownloads: 0,
      uncertainDownloads: 0,
      deleting: false,
    })
    const file = account.files.get(body.file_id)!
    const downloaded = await fetch(`${instance.url}${downloadPath}`, { signal: timeout() })
    const bytes = Buffer.from(await downloaded.arrayBuffer())
    if (downloaded.status === 200) file.countedDownloads++
    else if (downloaded.status >= 500) file.uncertainDownloads++
    if (downloaded.status !== 200 || !bytes.equals(content)) return `${instance.name}: download ${downloaded.status}`
    return undefined
  } catch (error) {
    return `${instance.name}: ${(error as Error).message}`
  }
}

/** Probes both instances every 250 ms from `since` until a round where both are whole; the time that took. */
export async function waitForRecovery(
  stack: ScaleOutStack,
  account: Account,
  since: number,
): Promise<{ recoveryMs: number | undefined; lastFailure: string | undefined }> {
  let lastFailure: string | undefined
  while (Date.now() - since < PROBE_LIMIT_MS) {
    const failures = (await Promise.all(stack.instances.map((instance) => probeInstance(instance, account)))).filter(Boolean)
    if (failures.length === 0) return { recoveryMs: Date.now() - since, lastFailure }
    lastFailure = failures.join('; ')
    await sleep(250)
  }
  return { recoveryMs: undefined, lastFailure }
}

/** Runs the plan against the stack, from `loadStarted`; resolves with what was done and when. */
export async function runChaos(
  stack: ScaleOutStack,
  plan: ChaosPlan,
  loadStarted: number,
  probeAccount: Account,
  log: (line: string) => void,
): Promise<Fault[]> {
  const faults: Fault[] = []
  const backends: Record<Exclude<FaultKind, 'kill -9'>, PrivateBackend> = { PostgreSQL: stack.postgres, Redis: stack.redis, S3: stack.s3 }
  for (const step of plan.at) {
    const wait = loadStarted + step.atSeconds * 1000 - Date.now()
    if (wait > 0) await sleep(wait)
    let startedAt: number
    let endedAt: number
    let target: string
    if (step.kind === 'kill -9') {
      const victim = stack.instances.find((instance) => instance.name === 'A')!
      target = `instance ${victim.name} (pid ${victim.pid})`
      startedAt = Date.now()
      await stack.killInstance(victim.name)
      log(`chaos: killed ${target} with SIGKILL`)
      await sleep(plan.killDownSeconds * 1000)
      const restarted = await stack.startInstance(victim.name)
      endedAt = Date.now()
      log(`chaos: instance ${victim.name} started again (pid ${restarted.pid}) after ${((endedAt - startedAt) / 1000).toFixed(1)} s`)
    } else {
      const backend = backends[step.kind]
      target = `${backend.name} (process group ${backend.pgid})`
      startedAt = Date.now()
      backend.freeze()
      log(`chaos: froze ${target} for ${plan.cutSeconds} s`)
      await sleep(plan.cutSeconds * 1000)
      backend.thaw()
      endedAt = Date.now()
      log(`chaos: thawed ${target}`)
    }
    const { recoveryMs, lastFailure } = await waitForRecovery(stack, probeAccount, endedAt)
    log(
      `chaos: after ${step.kind}, ${recoveryMs === undefined ? 'NOT whole again' : `whole again after ${(recoveryMs / 1000).toFixed(1)} s`}` +
        (lastFailure ? ` (last failing probe: ${lastFailure})` : ''),
    )
    faults.push({ kind: step.kind, target, startedAt, endedAt, recoveryMs, lastProbeFailure: lastFailure })
  }
  return faults
}
