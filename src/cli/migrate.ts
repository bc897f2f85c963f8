import { loadConfig } from '../config.ts';
import { openDatabase, runMigrations } from '../db/client.ts';

const config = loadConfig();
const database = await openDatabase(config);
await runMigrations(database, config.databaseUrl);
await database.close();
console.log(`migrations applied (${database.kind})`);
