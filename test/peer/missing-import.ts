// A dynamic import of a specifier that is not in the manifest fails with a
// message naming it; the program goes on.
try {
	const specifier = ["no", "such", "module"].join("/"); // computed, so the build check lets it through
	await import(specifier);
} catch (error) {
	trace(`caught: ${(error as Error).message}\n`);
}
export {};
