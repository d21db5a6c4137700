#!/usr/bin/env node
// `npx hearth …`: runs the TypeScript CLI through tsx (a runtime dependency), as `npm start` runs the server.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/hearth.ts');
