fn main() {
    let t0 = std::time::Instant::now();
    let c = cubefleet_tables::CoordTables::compute();
    eprintln!("coords {:?}", t0.elapsed());
    let p = |n: &str, a: u64, b: u64| eprintln!("{n} {a}/{b} {:?}", t0.elapsed());
    let t = cubefleet_tables::prune::build_phase1(&c, &p);
    eprintln!("{:?}", cubefleet_tables::prune::distribution(&t));
    let t = cubefleet_tables::prune::build_phase2(&c, &p);
    eprintln!("{:?}", cubefleet_tables::prune::distribution(&t));
    let t = cubefleet_tables::prune::build_phase2_slice(&c, &p);
    eprintln!("{:?}", cubefleet_tables::prune::distribution(&t));
}
