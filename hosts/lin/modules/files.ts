// files on the lin host: the native class of hosts/lin/src/files.c.
const Files = __xsclaw.Files;
export default Files;
