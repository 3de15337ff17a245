// The lin host's DNS resolver (hosts/lin/src/dns.c): answers that need no
// lookup, names through getaddrinfo on the worker thread, errors, cancellation,
// argument checks. No test sends a query off the machine: "127.1"-style names
// are parsed by getaddrinfo itself, and malformed names fail before any lookup.
import Resolver from "embedded:network/dns/resolver/udp";
import Timer from "timer";
import { collectGarbage } from "host/platform";
import { assert, test } from "testing";

interface Answer { resolved: boolean; host: string; value: string; self: unknown }

function lookup(resolver: Resolver, host: string): Promise<Answer> {
	return new Promise((resolve) => {
		resolver.resolve({
			host,
			onResolved(name, address) { resolve({ resolved: true, host: name, value: address, self: this }); },
			onError(name, message) { resolve({ resolved: false, host: name, value: message, self: this }); },
		});
	});
}

const delay = (ms: number) => new Promise((resolve) => Timer.set(resolve, ms));
// Allocates enough that slots freed by a collection are taken again.
const churn = () => { const kept = []; for (let i = 0; i < 2000; i++) kept.push({ i }); return kept.length; };

test("an IPv4 literal answers itself on a later turn, with the resolver as this", async () => {
	const resolver = new Resolver({});
	let early = false;
	const answer = lookup(resolver, "192.0.2.7");
	answer.then(() => { early = true; });
	assert.equal(early, false, "answered inside resolve()");
	const { resolved, host, value, self } = await answer;
	assert.ok(resolved, "resolved");
	assert.equal(host, "192.0.2.7");
	assert.equal(value, "192.0.2.7");
	assert.equal(self, resolver, "this in onResolved");
	resolver.close();
});

test("an IPv6 literal answers in its normal form", async () => {
	const resolver = new Resolver();
	const answer = await lookup(resolver, "0:0:0:0:0:0:0:1");
	assert.ok(answer.resolved);
	assert.equal(answer.value, "::1");
	resolver.close();
});

test("localhost answers 127.0.0.1 without a lookup", async () => {
	const resolver = new Resolver({ servers: ["192.0.2.53"] });
	const answer = await lookup(resolver, "LocalHost");
	assert.equal(answer.value, "127.0.0.1");
	assert.equal(answer.host, "LocalHost");
	resolver.close();
});

test("names go through getaddrinfo on the worker thread, several at once", async () => {
	const resolver = new Resolver({});
	// getaddrinfo reads these as the numeric forms inet_aton accepts: no query is sent.
	const answers = await Promise.all(["127.1", "127.0.2", "127.3"].map((h) => lookup(resolver, h)));
	assert.deepEqual(answers.map((a) => a.value), ["127.0.0.1", "127.0.0.2", "127.0.0.3"]);
	assert.ok(answers.every((a) => a.resolved && typeof a.value === "string"), "all resolved to strings");
	resolver.close();
});

test("a malformed name fails through onError, naming it, without a lookup", async () => {
	const resolver = new Resolver({});
	for (const host of ["a..b", "bad name.example", "-" + "x".repeat(64) + ".example", "."]) {
		const answer = await lookup(resolver, host);
		assert.equal(answer.resolved, false, host);
		assert.equal(answer.host, host);
		assert.match(answer.value, /is not a valid host name/);
	}
	resolver.close();
});

test("close() cancels pending answers, literal and looked up", async () => {
	const resolver = new Resolver({});
	let called = 0;
	for (const host of ["10.0.0.1", "localhost", "127.1", "a..b"])
		resolver.resolve({ host, onResolved() { called++; }, onError() { called++; } });
	resolver.close();
	resolver.close();
	await delay(100);
	assert.equal(called, 0, "callbacks after close()");
});

test("a resolver nobody references still answers its pending lookups", async () => {
	const answer = new Promise<string>((resolve) => {
		new Resolver({}).resolve({ host: "127.1", onResolved: (_h, address) => resolve(address) });
	});
	collectGarbage();
	assert.equal(await answer, "127.0.0.1");
});

test("at most 16 lookups are pending per resolver", async () => {
	const resolver = new Resolver({});
	const answers: Promise<Answer>[] = [];
	for (let i = 0; i < 16; i++) answers.push(lookup(resolver, `10.0.0.${i}`));
	assert.throws(() => resolver.resolve({ host: "10.0.1.1", onResolved() {} }), "16 lookups are already pending");
	await Promise.all(answers);
	assert.ok((await lookup(resolver, "10.0.1.1")).resolved, "room again after answers");
	resolver.close();
});

test("the resolver checks its receiver, its options and its state", () => {
	const resolver = new Resolver({});
	const ok = () => {};
	const R = Resolver as any;
	assert.throws(() => new R(5), "Resolver: options must be an object", TypeError);
	assert.throws(() => Resolver.prototype.resolve.call({} as any, { host: "x", onResolved: ok }), "Resolver: invalid receiver", TypeError);
	assert.throws(() => Resolver.prototype.close.call({} as any), "Resolver: invalid receiver", TypeError);
	assert.throws(() => (resolver.resolve as any)(), "Resolver: options object required", TypeError);
	assert.throws(() => resolver.resolve({} as any), "Resolver: host required", TypeError);
	assert.throws(() => resolver.resolve({ host: "", onResolved: ok }), "Resolver: host required", TypeError);
	assert.throws(() => resolver.resolve({ host: 42 as any, onResolved: ok }), "Resolver: host must be a string", TypeError);
	assert.throws(() => resolver.resolve({ host: "x".repeat(254), onResolved: ok }), "Resolver: host too long", RangeError);
	assert.throws(() => resolver.resolve({ host: "x" }), "Resolver: onResolved or onError required", TypeError);
	assert.throws(() => resolver.resolve({ host: "x", onResolved: 1 as any }), "Resolver: onResolved must be a function", TypeError);
	assert.throws(() => resolver.resolve({ host: "x", onError: "no" as any }), "Resolver: onError must be a function", TypeError);
	resolver.close();
	assert.throws(() => resolver.resolve({ host: "x", onResolved: ok }), "Resolver: closed");
});

test("callbacks that option getters create survive a collection while the options are read", async () => {
	const resolver = new Resolver({});
	const address = await new Promise<string>((resolve) => {
		resolver.resolve({
			host: "127.0.0.1",
			get onResolved() { collectGarbage(); return (_h: string, a: string) => resolve(a); },
			get onError() { collectGarbage(); churn(); return undefined; },
		});
	});
	assert.equal(address, "127.0.0.1");
	resolver.close();
});

test("a resolver closed by a getter of the options it was given throws \"closed\"", () => {
	const resolver = new Resolver({});
	assert.throws(() => resolver.resolve({ get host() { resolver.close(); return "127.0.0.1"; }, onResolved() {} }), "Resolver: closed");
});
