// A worker module that runs its machine out of memory while it starts.
const hoard: string[] = [];
for (;;) hoard.push("y".repeat(1024) + hoard.length);
