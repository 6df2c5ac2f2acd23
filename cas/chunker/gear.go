package chunker

// gearSeed seeds the splitmix64 generator that fills the gear table. It is
// part of the on-disk format: changing it (or the generator) moves every
// chunk boundary. The value spells "cairngea" in ASCII.
const gearSeed = 0x636169726e676561

// gear maps each byte to a pseudo-random 64-bit value for the gear hash.
var gear = makeGear(gearSeed)

// makeGear fills a gear table with successive outputs of splitmix64
// (Steele, Lea and Flood, "Fast splittable pseudorandom number generators",
// 2014): state += 0x9e3779b97f4a7c15, then two xor-shift-multiply rounds.
func makeGear(seed uint64) [256]uint64 {
	var t [256]uint64
	s := seed
	for i := range t {
		s += 0x9e3779b97f4a7c15
		z := s
		z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
		z = (z ^ z>>27) * 0x94d049bb133111eb
		t[i] = z ^ z>>31
	}
	return t
}
