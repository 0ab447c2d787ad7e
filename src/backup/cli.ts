/**
 * npm run backup -- FILE            back up DATA_DIR (default data/) to FILE, while the service runs
 * npm run restore -- FILE DIRECTORY  make DIRECTORY (missing or empty) a data directory from FILE
 */
import { resolve } from 'node:path'
import { backupDataDir, restoreBackup, sizeOf } from './backup'

const [command, file, directory] = process.argv.slice(2)
try {
  if (command === 'backup' && file) {
    const dataDir = resolve(process.env.DATA_DIR?.trim() || 'data')
    const header = await backupDataDir(dataDir, resolve(file))
    console.log(`Backed up ${dataDir} to ${resolve(file)}: ${header.lastEventId} events, ${await sizeOf(resolve(file))} bytes`)
  } else if (command === 'restore' && file && directory) {
    const header = await restoreBackup(resolve(file), resolve(directory))
    console.log(`Restored ${resolve(file)} (taken ${header.createdAt}, ${header.lastEventId} events) into ${resolve(directory)}`)
  } else {
    console.error('usage: npm run backup -- FILE   |   npm run restore -- FILE DIRECTORY')
    process.exit(2)
  }
} catch (error) {
  console.error(`Cannot ${command}: ${(error as Error).message}`)
  process.exit(1)
}
