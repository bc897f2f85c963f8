#!/usr/bin/env node
// The `nfse` command (package.json "bin"): the compiled CLI, through the same runner as `npm start`
// (scripts/run.mjs: rebuilds dist/ first when the sources are newer).
process.argv.splice(2, 0, 'src/cli/nfse.ts');
await import('../scripts/run.mjs');
