// host/random on the lin host (declaration: typings/shared/random.d.ts): the C
// of hosts/common/random/random.c over getrandom(2), installed on
// __xsclaw.Random by hosts/lin/src/random_lin.c.
import type * as Random from "host/random";

export const fill: typeof Random.fill = __xsclaw.Random.fill;
