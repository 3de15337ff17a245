// An independent QQ bot client (qq-official-bot, pinned in package.json) as a
// process of its own, for test/e2e/mock-qq.test.mjs: it connects to the mock QQ
// platform given on the command line (the SDK's URLs are fixed to QQ's hosts, so
// an axios interceptor sends every request to the mock, loopback only), prints
// one JSON line per message it receives and replies "pong from the sdk". It runs
// until its stdin closes (the SDK leaves timers behind after stop()).
//   node test/e2e/qq-sdk-peer.mjs API_URL TOKEN_URL APP_ID SECRET
import { Bot, ReceiverMode } from "qq-official-bot";

const [apiUrl, tokenUrl, appid, secret] = process.argv.slice(2);
const bot = new Bot({ appid, secret, sandbox: false, logLevel: "off", intents: ["GROUP_AND_C2C_EVENT"], mode: ReceiverMode.WEBSOCKET, maxRetry: 3 });
const out = (value) => process.stdout.write(`${JSON.stringify(value)}\n`);
bot.request.interceptors.request.use((config) => {
	const target = new URL(config.url, config.baseURL ?? undefined);
	out({ host: target.host });
	config.url = target.host === "bots.qq.com" ? tokenUrl : `${apiUrl}${target.pathname}${target.search}`;
	config.baseURL = undefined;
	return config;
});
bot.on("message", (event) => {
	out({ message: { type: event.message_type, text: event.raw_message } });
	event.reply("pong from the sdk").then(() => out({ reply: "sent" }), (error) => out({ reply: String(error.message) }));
});
process.on("unhandledRejection", (error) => out({ rejection: String(error?.message ?? error) }));
process.stdin.on("end", () => process.exit(0));
process.stdin.resume();
await bot.start();
out({ started: true });
