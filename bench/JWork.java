// sonde collect -P on a JVM (bench/attach.sh): two threads each run a
// fixed amount of work (inner() in a loop, inlined by the JIT) after
// printing "up"; prints the work's wall time: "work wall_s S".
public class JWork {
	static volatile double sink;

	static double inner(long n, double x) {
		for (long i = 0; i < n; i++)
			x = x * 1.0000001 + 1e-9;
		return x;
	}

	static void work(long rounds) {
		double x = 1;
		for (long r = 0; r < rounds; r++)
			x = inner(100000, x);
		sink += x;
	}

	public static void main(String[] a) throws Exception {
		long rounds = Long.parseLong(a[0]);
		System.out.println("up");
		System.out.flush();
		Thread.sleep(Integer.parseInt(a[1]));
		long t0 = System.nanoTime();
		Thread w = new Thread(() -> work(rounds), "worker");
		w.start();
		work(rounds);
		w.join();
		System.out.printf("work wall_s %.4f%n", (System.nanoTime() - t0) / 1e9);
	}
}
