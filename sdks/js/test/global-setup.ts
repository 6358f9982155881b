// One server for the whole suite, from the shared launcher; tests get its URL and keys with inject().
import type { TestProject } from 'vitest/node'
import { startLauncher, stopLauncher, type LauncherInfo } from './helpers/launcher.js'

declare module 'vitest' {
  export interface ProvidedContext {
    fileshare: LauncherInfo
  }
}

export default async function setup(project: TestProject) {
  const { info, child } = await startLauncher()
  project.provide('fileshare', info)
  return async () => {
    await stopLauncher(child)
  }
}
