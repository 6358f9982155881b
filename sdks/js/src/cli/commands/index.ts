// Every command of `fshare`, in the order of the help.
import type { Command } from '../command.js'
import { audit } from './audit.js'
import { get } from './get.js'
import { info } from './info.js'
import { key } from './key.js'
import { LINK_GROUP, linkCreate, linkList, linkRevoke, linkRotate } from './link.js'
import { ls } from './ls.js'
import { rm } from './rm.js'
import { stats } from './stats.js'
import { upload } from './upload.js'
import { REQUEST_COMMANDS, REQUEST_GROUP } from './request.js'
import { WEBHOOK_COMMANDS, WEBHOOK_GROUP } from './webhook.js'
import { zip } from './zip.js'

export const COMMANDS: ReadonlyMap<string, Command> = new Map(
  [
    upload,
    ls,
    info,
    get,
    zip,
    rm,
    linkCreate,
    linkList,
    linkRevoke,
    linkRotate,
    stats,
    key,
    audit,
    ...WEBHOOK_COMMANDS,
    ...REQUEST_COMMANDS,
  ].map((command) => [command.name, command]),
)

/** Groups of commands (`fshare link create`), with what their help says first. */
export const GROUPS: ReadonlyMap<string, string> = new Map([
  ['link', LINK_GROUP],
  ['webhook', WEBHOOK_GROUP],
  ['request', REQUEST_GROUP],
])
