import { saoPauloFamily } from '../../src/engines/sao-paulo/family.ts';
import { saoPauloConformance } from './sao-paulo-target.ts';
import { describeConformance } from './suite.ts';

/** São Paulo (NF-e Paulistana v02, synchronous EnvioRPS) against its sandbox; the target is in sao-paulo-target.ts. */
describeConformance(saoPauloConformance(saoPauloFamily));
