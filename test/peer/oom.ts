// Exhausts the XS heap on purpose: the host must end with a clear message and
// a non-zero exit, never a segfault (test/e2e/host.test.mjs).
const hoard: string[][] = [];
for (let i = 0; i < 1e7; i++) hoard.push(new Array(64).fill("x".repeat(32) + i));
trace("unreachable: the heap did not run out\n");
export {};
