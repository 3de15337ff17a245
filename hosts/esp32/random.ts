// host/random on the ESP32-S3 (declaration: typings/shared/random.d.ts): the C
// of hosts/common/random/random.c over the hardware RNG (hosts/esp32/random_esp32.c),
// reached by name.
import type * as Random from "host/random";

export const fill: typeof Random.fill = native("xs_random_fill");
