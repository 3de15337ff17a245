// A worker module that throws while it runs: new Worker() must throw too.
throw new Error("worker module failed on purpose");
