// Every command of `fshare`, in the order of the help.
import type { Command } from '../command.js'
import { get } from './get.js'
import { info } from './info.js'
import { LINK_GROUP, linkCreate, linkList, linkRevoke, linkRotate } from './link.js'
import { ls } from './ls.js'
import { rm } from './rm.js'
import { stats } from './stats.js'
import { upload } from './upload.js'

export const COMMANDS: ReadonlyMap<string, Command> = new Map(
  [upload, ls, info, get, rm, linkCreate, linkList, linkRevoke, linkRotate, stats].map((command) => [command.name, command]),
)

/** Groups of commands (`fshare link create`), with what their help says first. */
export const GROUPS: ReadonlyMap<string, string> = new Map([['link', LINK_GROUP]])
