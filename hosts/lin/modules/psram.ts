// psram on the lin host: placeholder until hosts/lin/src/buffers.c lands.
export default __xsclaw.Buffers;
