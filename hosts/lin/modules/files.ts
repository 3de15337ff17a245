// embedded:storage/files on the lin host: the root directory object of
// hosts/lin/src/files.c (<data>/files), frozen, as the Moddable SDK exports it;
// also host/files, the root util/io gives the firmware once host/storage's
// check let it (hosts/esp32/files.ts on the board).
import type { Directory } from "embedded:storage/files";

const files: Directory = Object.freeze(__xsclaw.files as Directory);
export default files;
