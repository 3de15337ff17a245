// An unhandled rejection ends the program with exit 1 and names the error.
Promise.reject(new Error("nobody handles this"));
export {};
