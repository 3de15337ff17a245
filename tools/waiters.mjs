// The mocks' waitFor (tools/mock-telegram, tools/mock-qq): resolves with the first
// truthy value of predicate(), checked now and whenever the mock calls the
// watchers it keeps (on every request or event); rejects after ms with the
// sentence failure() gives, so a test never waits on a fixed time.
export function waitFor(watchers, predicate, ms, failure) {
  return new Promise((resolve, reject) => {
    const check = () => {
      let value;
      try { value = predicate(); } catch (error) { return finish(() => reject(error)); }
      if (value) finish(() => resolve(value));
    };
    const timer = setTimeout(() => finish(() => reject(new Error(failure()))), ms);
    const finish = (fn) => { clearTimeout(timer); watchers.delete(check); fn(); };
    watchers.add(check);
    check();
  });
}
