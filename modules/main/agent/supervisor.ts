// agent/supervisor: the main machine's keeper of the agent machine. It starts
// the agent Worker (through spawn, agent/spawn on the board), attaches the port
// client to it with the agent's settings, forwards every change of those
// settings at once, and notices when the machine dies (out of memory, an
// uncaught error, a kill): the client's calls in flight end at once with a
// sentence saying why, the console is told, and a new machine is started after
// AGENT_RESTART_BACKOFF_MS. More deaths than there are back-off steps within
// AGENT_RESTART_WINDOW_MS and the agent stays down, with a message saying what
// to do; the console, config and (later) the channels keep working.
//
// A machine that hangs (a loop that never gives its turn back) is noticed by a
// heartbeat: while it runs, it is pinged every AGENT_HEARTBEAT_MS, and one that
// has not answered within AGENT_HEARTBEAT_DEADLINE_MS is ended and restarted as
// if it had died (issue 25): the calls in flight fail with a sentence saying so,
// and `status` shows the reason. Ending it must not leave its thread running:
// on lin, worker.c meters every worker machine and ends one whose creator
// terminated it at its next meter check, inside a loop of script or of a built-in.
//
// stop() (before a reboot) asks the agent to stop its cores and close its
// files, waits at most AGENT_STOP_TIMEOUT_MS, then ends the machine.
import Timer from "timer";
import { AGENT_HEARTBEAT_DEADLINE_MS, AGENT_HEARTBEAT_MS, AGENT_RESTART_BACKOFF_MS, AGENT_RESTART_WINDOW_MS, AGENT_START_TIMEOUT_MS, AGENT_STOP_TIMEOUT_MS } from "budgets";
import { messageOf } from "util/errors";
import { log as logLine } from "util/log";
import { AgentClient, type Ready } from "agent/client";
import type { ToAgent } from "agent/protocol";
import { SECRET_PRINTS_SETTING, agentSettings, isAgentSetting, isPrintedSecret, secretPrints } from "agent/settings";
import { keepHeadroom } from "util/heap";

/** One running agent machine, as the supervisor drives it. */
export interface AgentMachine {
	post(message: ToAgent): void;
	/** Ends the machine at once (nothing more is delivered from it). */
	terminate(): void;
}

/**
 * Starts an agent machine whose messages go to onmessage and whose death (with
 * a reason) goes to onerror. Throws when the machine cannot be created or its
 * main module throws.
 */
export type SpawnAgent = (handlers: { onmessage(message: unknown): void; onerror(reason: string): void }) => AgentMachine;

/** The part of config/store's Config the supervisor reads. */
export interface SettingsSource {
	entries(): Array<[string, string]>;
	onChange(listener: (name: string, value: string | undefined) => void): () => void;
}

export type AgentState = "starting" | "running" | "restarting" | "down" | "stopped";

export interface SupervisorOptions {
	spawn: SpawnAgent;
	config: SettingsSource;
	/** A line for the person at the console (the agent stopped, restarted, stays down). Must not throw. */
	notice(line: string): void;
	/** Told each time a machine is ready (first start and restarts), with its commands and warnings. Must not throw. */
	onReady?(ready: Ready, restart: boolean): void;
	/** Lines about the port (default trace). */
	log?(line: string): void;
	/** Monotonic milliseconds. */
	now(): number;
	/** Overrides for tests; the budgets otherwise. */
	backoffMs?: readonly number[];
	windowMs?: number;
	startTimeoutMs?: number;
	/** How long a running machine may leave the heartbeat unanswered (AGENT_HEARTBEAT_DEADLINE_MS); it is pinged every third of that or AGENT_HEARTBEAT_MS, the shorter. */
	deadlineMs?: number;
}

export class AgentSupervisor {
	/** The one client of the agent port: the console and the channels use it. */
	readonly client: AgentClient;
	#options: SupervisorOptions;
	#machine?: AgentMachine;
	#generation = 0;
	#state: AgentState = "starting";
	#deaths: number[] = [];
	#restarts = 0;
	#lastReason = "";
	#startTimer?: ReturnType<typeof Timer.set>;
	#restartTimer?: ReturnType<typeof Timer.set>;
	#beatTimer?: ReturnType<typeof Timer.set>;
	#deadlineTimer?: ReturnType<typeof Timer.set>;
	/** Heartbeats the running machines answered (all machines). */
	#beats = 0;
	#firstReady?: (ready: Ready | undefined) => void;

	constructor(options: SupervisorOptions) {
		this.#options = options;
		this.client = new AgentClient({ log: options.log, onReady: (ready) => this.#ready(ready) });
		options.config.onChange((name, value) => {
			if (isAgentSetting(name)) this.client.setting(name, value);
			else if (isPrintedSecret(name)) this.client.setting(SECRET_PRINTS_SETTING, secretPrints(options.config.entries()));
		});
	}

	get state(): AgentState {
		return this.#state;
	}

	/** Times a new machine was started after one died. */
	get restarts(): number {
		return this.#restarts;
	}

	/**
	 * Starts the first agent machine; resolves with what it said when ready
	 * (after onReady), or undefined when it did not start (the console has been
	 * told, and the restart policy runs as for any death).
	 */
	start(): Promise<Ready | undefined> {
		return new Promise((resolve) => {
			this.#firstReady = resolve;
			this.#spawn();
		});
	}

	/** The line `status` shows about the agent machine. */
	statusLine(): string {
		const restarts = `${this.#restarts} restart${this.#restarts === 1 ? "" : "s"}`;
		switch (this.#state) {
			case "running": return `agent machine: running (${restarts}${this.#lastReason ? `; last stop: ${this.#lastReason}` : ""})`;
			case "starting": return `agent machine: starting (${restarts})`;
			case "restarting": return `agent machine: restarting after it stopped (${this.#lastReason})`;
			case "down": return `agent machine: down after it stopped ${this.#deaths.length} times (last: ${this.#lastReason}); type reboot to start it again`;
			case "stopped": return "agent machine: stopped for a reboot";
		}
	}

	/** Before a reboot: the agent closes its files, then its machine ends. No restart follows. */
	async stop(): Promise<void> {
		if (this.#state === "stopped") return;
		const wasRunning = this.#state === "running";
		this.#state = "stopped";
		this.#clearTimers();
		if (wasRunning) {
			let timer: ReturnType<typeof Timer.set> | undefined;
			const late = new Promise<void>((resolve) => (timer = Timer.set(() => resolve(), AGENT_STOP_TIMEOUT_MS)));
			await Promise.race([this.client.stop().catch(() => {}), late]);
			Timer.clear(timer!);
		}
		this.#end("the firmware is rebooting; ask again once it is back");
	}

	#spawn(): void {
		const generation = ++this.#generation;
		this.#state = "starting";
		let machine: AgentMachine;
		try {
			machine = this.#options.spawn({
				onmessage: (message) => {
					if (generation === this.#generation) this.client.receive(message);
					keepHeadroom();
				},
				onerror: (reason) => {
					if (generation !== this.#generation) return;
					// That machine has ended already: nothing to terminate.
					this.#machine = undefined;
					this.#died(reason || "no reason given");
				},
			});
		} catch (error) {
			return this.#died(`it could not be started: ${messageOf(error)}`);
		}
		this.#machine = machine;
		const timeoutMs = this.#options.startTimeoutMs ?? AGENT_START_TIMEOUT_MS;
		this.#startTimer = Timer.set(() => {
			this.#startTimer = undefined;
			this.#died(`it did not say it was ready within ${Math.round(timeoutMs / 1000)} s`);
		}, timeoutMs);
		try {
			this.client.attach((message) => machine.post(message), agentSettings(this.#options.config.entries()));
		} catch (error) {
			this.#died(`its settings could not be sent: ${messageOf(error)}`);
		}
	}

	#ready(ready: Ready): void {
		if (this.#state !== "starting") return;
		if (this.#startTimer !== undefined) Timer.clear(this.#startTimer);
		this.#startTimer = undefined;
		this.#state = "running";
		const restart = this.#restarts > 0;
		if (restart) this.#options.notice(`agent: restarted (restart ${this.#restarts}); ask again`);
		this.#options.onReady?.(ready, restart);
		this.#beat(this.#generation);
		const first = this.#firstReady;
		this.#firstReady = undefined;
		first?.(ready);
	}

	#died(reason: string): void {
		if (this.#state === "stopped" || this.#state === "down") return;
		this.#lastReason = reason;
		const now = this.#options.now();
		const windowMs = this.#options.windowMs ?? AGENT_RESTART_WINDOW_MS;
		this.#deaths = this.#deaths.filter((at) => now - at < windowMs);
		this.#deaths.push(now);
		const backoff = this.#options.backoffMs ?? AGENT_RESTART_BACKOFF_MS;
		const step = this.#deaths.length - 1;
		if (step >= backoff.length) {
			this.#state = "down";
			const minutes = Math.round(windowMs / 60_000);
			this.#end(`the agent is down: it stopped ${this.#deaths.length} times within ${minutes} min (last: ${reason}); type reboot to start it again`);
			this.#options.notice(`agent: the agent machine stopped again (${reason}): ${this.#deaths.length} times within ${minutes} min, so it stays down. The console and config still work; fix what the reason says (for example free memory with session delete), then type reboot.`);
			this.#settleFirst();
			return;
		}
		this.#state = "restarting";
		this.#end(`the agent stopped (${reason}) and is restarting; ask again in a moment`);
		const waitMs = backoff[step];
		this.#options.notice(`agent: the agent machine stopped (${reason}); restarting it in ${waitMs < 1000 ? `${waitMs} ms` : `${Math.round(waitMs / 1000)} s`}`);
		this.#settleFirst();
		this.#restartTimer = Timer.set(() => {
			this.#restartTimer = undefined;
			this.#restarts++;
			this.#spawn();
		}, waitMs);
	}

	// The first start() resolves at its machine's first death too, so boot goes on.
	#settleFirst(): void {
		const first = this.#firstReady;
		this.#firstReady = undefined;
		first?.(undefined);
	}

	// Ends the current machine (if any) and every call waiting on it.
	#end(reason: string): void {
		this.#clearTimers();
		this.#generation++;
		const machine = this.#machine;
		this.#machine = undefined;
		this.client.detach(reason);
		try {
			machine?.terminate();
		} catch (error) {
			(this.#options.log ?? logLine)(`agent: ending the agent machine failed: ${messageOf(error)}`);
		}
	}

	#clearTimers(): void {
		if (this.#startTimer !== undefined) Timer.clear(this.#startTimer);
		if (this.#restartTimer !== undefined) Timer.clear(this.#restartTimer);
		if (this.#beatTimer !== undefined) Timer.clear(this.#beatTimer);
		if (this.#deadlineTimer !== undefined) Timer.clear(this.#deadlineTimer);
		this.#startTimer = this.#restartTimer = this.#beatTimer = this.#deadlineTimer = undefined;
	}

	/** Heartbeats answered so far (tests, status). */
	get heartbeats(): number {
		return this.#beats;
	}

	// The next heartbeat of the machine of this generation: a ping, and a
	// deadline that ends the machine if the pong has not come by then. A ping
	// refused for another reason than silence (the port full) just waits for the next.
	#beat(generation: number): void {
		const deadlineMs = this.#options.deadlineMs ?? AGENT_HEARTBEAT_DEADLINE_MS;
		const everyMs = Math.min(AGENT_HEARTBEAT_MS, Math.max(1, Math.floor(deadlineMs / 3)));
		const alive = () => generation === this.#generation && this.#state === "running";
		this.#beatTimer = Timer.set(() => {
			this.#beatTimer = undefined;
			if (!alive()) return;
			this.#deadlineTimer = Timer.set(() => {
				this.#deadlineTimer = undefined;
				if (alive()) this.#died(`it did not answer its heartbeat within ${deadlineMs < 10_000 ? `${deadlineMs} ms` : `${Math.round(deadlineMs / 1000)} s`}: it hung`);
			}, deadlineMs);
			const next = (answered: boolean) => {
				if (!alive() || this.#deadlineTimer === undefined) return;
				Timer.clear(this.#deadlineTimer);
				this.#deadlineTimer = undefined;
				if (answered) this.#beats++;
				this.#beat(generation);
			};
			// The call's own timeout is past the deadline: the deadline decides.
			this.client.ping(deadlineMs + everyMs).then(() => next(true), () => next(false));
		}, everyMs);
	}
}
