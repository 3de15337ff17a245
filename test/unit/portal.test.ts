// The setup network's DNS answers (wifi/portal, issue 30), inside XS: a query
// for any name gets the board's address (the captive portal), a name the
// answerer does not take gets NXDOMAIN (the simulated mDNS), other types no
// data; what is not one standard query is dropped. The fuzz target is last:
// damaged and random packets are answered or dropped, never a throw.
import { test, assert } from "testing";
import { generator, iterationsFor, mutate, randomBytes, seedFor } from "test/fuzz";
import { WEB_DNS_NAME_MAX_BYTES, WEB_DNS_QUERY_MAX_BYTES, WEB_DNS_TTL_S } from "budgets";
import { answerQuery, ipv4Bytes, readQuery } from "wifi/portal";

const BOARD = [192, 168, 4, 1];
const SEED = seedFor(30);

/** A query as a phone sends it: id, recursion desired, one question, and an EDNS record when asked. */
function query(name: string, type = 1, { id = 0x1234, edns = false } = {}): Uint8Array {
	const bytes = [id >> 8, id & 0xff, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, edns ? 1 : 0];
	for (const label of name.split(".").filter(Boolean)) {
		bytes.push(label.length);
		for (let i = 0; i < label.length; i++) bytes.push(label.charCodeAt(i));
	}
	bytes.push(0, type >> 8, type & 0xff, 0, 1);
	if (edns) bytes.push(0, 0, 41, 4, 0, 0, 0, 0, 0, 0, 0);
	return new Uint8Array(bytes);
}

const word = (b: Uint8Array, at: number) => (b[at] << 8) | b[at + 1];

test("an A question for any name is the board's address, with the question, the id and RD echoed, authoritative", () => {
	const asked = query("connectivitycheck.gstatic.com", 1, { edns: true });
	const answer = answerQuery(asked, BOARD);
	if (!answer) throw new Error("no answer");
	assert.equal(word(answer, 0), 0x1234);
	assert.equal(word(answer, 2), 0x8000 | 0x0400 | 0x0100, "response, authoritative, RD, NOERROR");
	assert.deepEqual([word(answer, 4), word(answer, 6), word(answer, 8), word(answer, 10)], [1, 1, 0, 0], "the EDNS record is not echoed");
	const end = asked.length - 11;
	assert.deepEqual([...answer.subarray(12, end)], [...asked.subarray(12, end)], "the question");
	assert.deepEqual([...answer.subarray(end)], [0xc0, 12, 0, 1, 0, 1, 0, 0, 0, WEB_DNS_TTL_S, 0, 4, 192, 168, 4, 1]);
	assert.equal(answer.length, end + 16);
});

test("AAAA gets no data; a name not taken gets NXDOMAIN; the name is read in lower case", () => {
	const six = answerQuery(query("example.com", 28), BOARD);
	assert.equal(six && word(six, 6), 0, "no answer records");
	assert.equal(six && word(six, 2) & 15, 0, "NOERROR");
	const only = (name: string) => name === "xsclaw.local";
	const other = answerQuery(query("printer.local"), [127, 0, 0, 1], only);
	assert.equal(other && word(other, 2) & 15, 3, "NXDOMAIN");
	assert.equal(other && word(other, 6), 0);
	const ours = answerQuery(query("XSclaw.Local"), [127, 0, 0, 1], only);
	assert.equal(ours && word(ours, 6), 1);
	assert.deepEqual(ours && [...ours.subarray(ours.length - 4)], [127, 0, 0, 1]);
	const read = readQuery(query("XSclaw.Local"));
	assert.equal(typeof read === "object" && read.name, "xsclaw.local");
});

test("what is not one standard query is dropped: a response, another opcode, two questions, a pointer, too long, cut short", () => {
	const good = query("a.example");
	const changed = (at: number, value: number) => {
		const copy = good.slice();
		copy[at] = value;
		return copy;
	};
	assert.equal(answerQuery(changed(2, 0x81), BOARD), undefined, "a response");
	assert.equal(answerQuery(changed(2, 0x11), BOARD), undefined, "opcode 2");
	assert.equal(answerQuery(changed(5, 2), BOARD), undefined, "two questions");
	assert.equal(answerQuery(changed(7, 1), BOARD), undefined, "an answer record in a query");
	assert.equal(answerQuery(changed(12, 0xc0), BOARD), undefined, "a compression pointer");
	assert.equal(answerQuery(good.subarray(0, good.length - 2), BOARD), undefined, "no class");
	assert.equal(answerQuery(good.subarray(0, 11), BOARD), undefined, "no header");
	const long = Array.from({ length: 5 }, () => "x".repeat(63)).join(".");
	assert.equal(answerQuery(query(long), BOARD), undefined, `a name over ${WEB_DNS_NAME_MAX_BYTES} bytes`);
	const padded = new Uint8Array(WEB_DNS_QUERY_MAX_BYTES + 1);
	padded.set(good);
	assert.equal(answerQuery(padded, BOARD), undefined, `over ${WEB_DNS_QUERY_MAX_BYTES} bytes`);
	assert.deepEqual(ipv4Bytes("192.168.4.1"), BOARD);
	assert.equal(ipv4Bytes("192.168.4"), undefined);
	assert.equal(ipv4Bytes("256.1.1.1"), undefined);
});

// The fuzz target: damaged and random packets are answered (a well-formed answer to what was read) or dropped, never a throw.
test("fuzz: damaged and random queries are answered or dropped, never a throw", () => {
	const rand = generator(SEED);
	const seeds = [query("connectivitycheck.gstatic.com"), query("xsclaw.local", 255), query("a.b.c.d.e", 28, { edns: true })];
	let answered = 0, dropped = 0;
	const iterations = iterationsFor(4000);
	for (let i = 0; i < iterations; i++) {
		const packet = i % 4 === 3 ? randomBytes(rand, 600) : mutate(seeds[rand(seeds.length)], rand);
		const answer = answerQuery(packet, BOARD, i % 2 ? (name) => name.endsWith(".local") : undefined);
		if (!answer) {
			dropped++;
			continue;
		}
		answered++;
		const read = readQuery(packet);
		if (typeof read === "string") throw new Error(`answered what readQuery refuses: ${read}`);
		assert.equal(word(answer, 0), read.id);
		assert.ok(answer[2] & 0x80, "a response");
		assert.ok(answer.length === read.end || answer.length === read.end + 16);
	}
	assert.ok(answered > iterations / 40 && dropped > iterations / 40, `answered ${answered}, dropped ${dropped}`);
});
