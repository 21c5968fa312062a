/*
 * The Java agent's cost (bench/java.sh): fixed work in two threads (a
 * call chain whose leaf the JIT inlines, and object allocation), timed by
 * the program itself from its first to its last unit.
 *	wall_s S check C
 */
public class JBench {
	static double inner(double x) {
		for (int i = 0; i < 50; i++)
			x = x * 1.0000001 + 1e-9;
		return x;
	}

	static double outer(long n) {
		double x = 1;
		StringBuilder sb = new StringBuilder();
		for (long i = 0; i < n; i++) {
			x = inner(x);
			if ((i & 1023) == 0) {
				sb.setLength(0);
				sb.append(i).append(x);
				x += sb.length() * 1e-12;
			}
		}
		return x;
	}

	public static void main(String[] args) throws Exception {
		long n = args.length > 0 ? Long.parseLong(args[0]) : 20000000L;
		double[] r = new double[2];
		long t0 = System.nanoTime();
		Thread w = new Thread(() -> r[1] = outer(n));
		w.start();
		r[0] = outer(n);
		w.join();
		System.out.printf("wall_s %.4f check %g%n", (System.nanoTime() - t0) / 1e9, r[0] + r[1]);
	}
}
