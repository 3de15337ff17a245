// What every native class of the lin host (hosts/lin/src) shares: a constructor
// attaches its record only to an instance of its own class, so one class's
// methods and destructor never see another class's record.
import TCP from "embedded:io/socket/tcp";
import TLS from "embedded:io/socket/tcp/tls";
import Resolver from "embedded:network/dns/resolver/udp";
import Serial from "embedded:io/serial";
import Digital from "embedded:io/digital";
import { allocate, free } from "psram";
import { assert, test } from "testing";

const Buffer = allocate(0, "internal").constructor as new (byteLength: number, pool: string) => HostBuffer;
type Constructor = new (...args: any[]) => any;

// Each class with arguments it would accept.
const classes: [string, Constructor, unknown[]][] = [
	["TCP", TCP as Constructor, [{ address: "127.0.0.1", port: 9 }]],
	["TLS", TLS as Constructor, [{ address: "127.0.0.1", port: 9, secure: { verify: false } }]],
	["Resolver", Resolver as Constructor, [{}]],
	["Serial", Serial as Constructor, [{}]],
	["Digital", Digital as Constructor, [{ pin: 40, mode: 0 }]],
	["psram", Buffer, [16, "internal"]],
];

test("a native constructor refuses another class as new.target", () => {
	for (const [name, Class, args] of classes) {
		for (const [, Other] of classes) {
			if (Other === Class) continue;
			assert.throws(() => Reflect.construct(Class, args, Other), `${name}: invalid new.target`, TypeError);
		}
		assert.throws(() => Reflect.construct(Class, args, class {}), `${name}: invalid new.target`, TypeError);
		assert.throws(() => Reflect.construct(Class, args, Object), `${name}: invalid new.target`, TypeError);
	}
});

test("a subclass of a native class constructs and its methods work", () => {
	class Pin extends (Digital as Constructor) {
		high() { return this.read() === 1; }
	}
	const pin = new Pin({ pin: 41, mode: (Digital as any).InputPullUp });
	assert.equal(pin.high(), true);
	pin.close();
	class Bytes extends Buffer {}
	const bytes = new Bytes(8, "internal");
	assert.equal(new Uint8Array(bytes).length, 8);
	free(bytes);
});
