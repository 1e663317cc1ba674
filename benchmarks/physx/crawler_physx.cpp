// crawler_physx.cpp: the Crawler of crawler/ (ML-Agents' CrawlerStaticTarget, mid-2018) built in
// PhysX 4.1 the way Unity 2018 builds it, for the fidelity check of docs/crawler.md.
//
// One crawler per run of a policy, the numbers of crawler/scene.py: a sphere body and four legs of
// two capsules, joined by D6 joints (a hip: twist limited and swing1 limited, a knee: twist only)
// with a slerp drive of spring 40000 and damper 3000 whose force limit is the agent's strength
// (drive limits as forces); PGS, 12 position and 12 velocity iterations, dt 0.01333, 5 physics
// steps per decision, max angular velocity 100, angular damping 0.05, friction 0.6, contact offset
// 0.01 on the crawlers' shapes (the ground plane keeps PhysX's default, 0.02, unless --contact-offset
// is given: the committed reference ran so, and setting Unity's 0.01 there moves its numbers). A decision's reward sums, over its physics steps, 0.03 v.d + 0.01 f.d from the state before
// the step; a body or upper leg within the contact offset of the ground (y = 0.5) after a step ends
// the episode with -1. Episode e's actions come from splitmix64 seeded seed + e (crawler/fidelity.py draws the same).
//
// Policies: still (no drive), stand (hips level, knees 75 degrees, full strength),
// uniform (U(-1, 1) actions), gauss (clipped N(0, 1)).
// Output: one line per episode: "EPISODE policy k decisions fell reward height30 speedmax",
// and for still/stand the body's height and leg 0's hip and knee angles per decision
// ("TRACE policy decision height hip knee").
// Usage: crawler_physx [--episodes N] [--decisions N] [--seed S] [--policies a,b] [readings]
//
// Closed loop: crawler_physx --serve --agents N [readings] builds N crawlers in one scene, crawler i
// where Unity's platform i puts it (z = -300 + 50 i, crawler/mjcf.py agent_origin), and answers a
// binary protocol on stdin/stdout (little-endian float64; benchmarks/physx/server.py is its client):
//   'R' + N bytes: crawlers whose byte is nonzero back to their first pose at rest (drives keep their
//       last settings, as BodyPart.Reset leaves them); reply N x 117: every crawler's sensor row now.
//   'S' + N x 20 actions: every crawler's drives from its action, then 5 physics steps; reply
//       N x 6 x 117: each crawler's sensor row before each physics step, then after the last.
//   'G': reply N x 9 x 13: each crawler's parts (body, upper0, lower0, ...) as position, rotation
//       (x, y, z, w), velocity and angular velocity: everything of the crawlers a later step reads
//       but PhysX's caches (contact manifolds, friction anchors), which a restored scene rebuilds.
//   'P' + N x 9 x 13 (as 'G' gives them): the crawlers put in that state; reply as 'R'.
//   'Q': exit 0.
// A sensor row is crawler/mjcf.py's SENSOR_SLICES in Unity's world coordinates (y up): each part's
// position (the actor's pose: Unity's transform position) and y axis, in PARTS order (body, upper0,
// lower0, ..., upper3, lower3); the body's x and z axes; the body's velocity; each part's velocity
// at its centre of mass; each part's angular velocity.
//
// Readings Unity's closed engine does not settle (defaults: the committed reference's):
//   --hip-y-sign minus|plus     the hip's target: minus (default) Ry(y) Rx(-x) in the joint frame;
//                               plus, the genuine one, the inverse of Euler(x, y, 0) (see act()).
//   --drive-limits force|impulse  maximumForce a force (default) or an impulse per step.
//   --locked tiny-limit|locked-twist-swing  the prefab's locked angular axes limited to 0.01 degrees
//                               under a slerp drive (default), or locked under twist and swing drives.
//   --contact-offset X          the shapes' contact offset (default 0.01); given, the ground plane's
//                               too (Unity's m_DefaultContactOffset is every collider's).
//   --iters P V                 solver position and velocity iterations (default 12 12).

#include "PxPhysicsAPI.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace physx;

namespace
{
const float DT = 0.01333f, SPRING = 40000.f, DAMPER = 3000.f, MAXF = 10000.f, GROUND = 0.5f, OFFSET = 0.01f;
const float BODY_R = 0.315f, LEG_R = 0.15f, UPPER_HALF = 0.5f * 1.7f * 0.48f - 0.15f, LOWER_HALF = 0.5f * 1.7f * 0.78f - 0.15f;
const float LOWER_CENTRE = 0.12f * 0.78f, HIP = -0.48f, KNEE = -0.78f;
const float DEG = 3.14159265358979f / 180.f;
// PhysX 4.1's D6 joint ignores a slerp drive when any angular axis is locked (ExtD6Joint.cpp: "SLERP
// drive requires all angular dofs unlocked"), which would leave the crawler without drives, while
// ML-Agents' crawler walks. The axes the prefab locks are therefore limited to a hundredth of a
// degree here, and the slerp drive acts on the others.
// (--locked locked-twist-swing instead locks them and drives the free axes with PhysX's twist and
// swing drives, which PhysX keeps with locked axes.)
const float LOCKED_LIMIT = 0.01f * 3.14159265358979f / 180.f;
const int PHYSICS_STEPS = 5, SENSOR_SIZE = 117, ACTION_SIZE = 20;

struct Options  // the readings above; the defaults are the committed reference's
{
	bool hipYPlus = false, driveImpulse = false, lockedTwistSwing = false, groundOffset = false;
	float contactOffset = OFFSET;
	int positionIters = 12, velocityIters = 12;
};
Options gOpt;

// PxDefaultErrorCallback prints with puts, onto stdout, which carries the --serve protocol.
class StderrErrorCallback : public PxErrorCallback
{
  public:
	void reportError(PxErrorCode::Enum code, const char* message, const char* file, int line) override
	{
		std::fprintf(stderr, "PhysX error %d at %s:%d: %s\n", int(code), file, line, message);
	}
};

struct Rng  // splitmix64, as crawler/fidelity.py
{
	uint64_t s;
	explicit Rng(uint64_t seed) : s(seed) {}
	uint64_t next()
	{
		uint64_t z = (s += 0x9E3779B97F4A7C15ULL);
		z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
		z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
		return z ^ (z >> 31);
	}
	double uni() { return double(next() >> 11) * (1.0 / 9007199254740992.0); }
	double normal()  // Box-Muller, one value per two draws
	{
		double u1;
		do { u1 = uni(); } while(u1 <= 0.0);
		double u2 = uni();
		return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
	}
};

PxDefaultAllocator gAlloc;
StderrErrorCallback gErr;
PxPhysics* gPhysics;
PxMaterial* gMat;

PxMat33 yaw(float deg)
{
	float c = std::cos(deg * DEG), s = std::sin(deg * DEG);
	return PxMat33(PxVec3(c, 0, -s), PxVec3(0, 1, 0), PxVec3(s, 0, c));  // columns: Unity's Euler(0, deg, 0)
}

struct Crawler
{
	PxRigidDynamic* body;
	PxRigidDynamic* upper[4];
	PxRigidDynamic* lower[4];
	PxD6Joint* hip[4];
	PxD6Joint* knee[4];
	std::vector<PxTransform> start;
};

PxRigidDynamic* makeLeg(PxScene* scene, const PxTransform& pose, float half, float centre, float mass)
{
	PxRigidDynamic* b = gPhysics->createRigidDynamic(pose);
	PxShape* s = PxRigidActorExt::createExclusiveShape(*b, PxCapsuleGeometry(LEG_R, half), *gMat);
	s->setLocalPose(PxTransform(PxVec3(0, centre, 0), PxQuat(PxHalfPi, PxVec3(0, 0, 1))));  // capsule x -> leg y
	s->setContactOffset(gOpt.contactOffset);
	s->setRestOffset(0.f);
	PxRigidBodyExt::setMassAndUpdateInertia(*b, mass);
	b->setSolverIterationCounts(PxU32(gOpt.positionIters), PxU32(gOpt.velocityIters));
	b->setMaxAngularVelocity(100.f);
	b->setAngularDamping(0.05f);
	b->setLinearDamping(0.f);
	scene->addActor(*b);
	return b;
}

// The joint's frame on the child: at the anchor, x the leg's own x, y its (0, 0, -1), z = x cross y.
PxD6Joint* makeJoint(PxRigidDynamic* parent, PxRigidDynamic* child, float anchor)
{
	PxTransform fChild(PxVec3(0, anchor, 0), PxQuat(-PxHalfPi, PxVec3(1, 0, 0)));
	PxTransform world = child->getGlobalPose() * fChild;
	PxTransform fParent = parent->getGlobalPose().getInverse() * world;
	PxD6Joint* j = PxD6JointCreate(*gPhysics, parent, fParent, child, fChild);
	j->setMotion(PxD6Axis::eX, PxD6Motion::eLOCKED);
	j->setMotion(PxD6Axis::eY, PxD6Motion::eLOCKED);
	j->setMotion(PxD6Axis::eZ, PxD6Motion::eLOCKED);
	j->setConstraintFlag(PxConstraintFlag::eDRIVE_LIMITS_ARE_FORCES, !gOpt.driveImpulse);  // else impulses per step
	return j;
}

// Sets the drives of leg k's hip and knee: one slerp drive each, or (locked-twist-swing) twist and
// swing drives of the same spring, damper and limit.
void setDrives(Crawler& c, int k, float spring, float damper, float hipLimit, float kneeLimit)
{
	if(gOpt.lockedTwistSwing)
	{
		c.hip[k]->setDrive(PxD6Drive::eTWIST, PxD6JointDrive(spring, damper, hipLimit, false));
		c.hip[k]->setDrive(PxD6Drive::eSWING, PxD6JointDrive(spring, damper, hipLimit, false));
		c.knee[k]->setDrive(PxD6Drive::eTWIST, PxD6JointDrive(spring, damper, kneeLimit, false));
	}
	else
	{
		c.hip[k]->setDrive(PxD6Drive::eSLERP, PxD6JointDrive(spring, damper, hipLimit, false));
		c.knee[k]->setDrive(PxD6Drive::eSLERP, PxD6JointDrive(spring, damper, kneeLimit, false));
	}
}

// The crawler whose agent origin (the prefab's Crawler object) is origin: (-200, 2.1, z).
Crawler build(PxScene* scene, const PxVec3& origin)
{
	Crawler c;
	PxMat33 root = yaw(45.f);
	PxTransform bodyPose(origin + root * PxVec3(0, 0.15f, 0), PxQuat(root * yaw(45.f)));
	c.body = gPhysics->createRigidDynamic(bodyPose);
	PxShape* s = PxRigidActorExt::createExclusiveShape(*c.body, PxSphereGeometry(BODY_R), *gMat);
	s->setContactOffset(gOpt.contactOffset);
	s->setRestOffset(0.f);
	PxRigidBodyExt::setMassAndUpdateInertia(*c.body, 1.f);
	c.body->setSolverIterationCounts(PxU32(gOpt.positionIters), PxU32(gOpt.velocityIters));
	c.body->setMaxAngularVelocity(100.f);
	c.body->setAngularDamping(0.05f);
	scene->addActor(*c.body);
	const PxVec3 dirs[4] = {PxVec3(0, 0, -1), PxVec3(-1, 0, 0), PxVec3(0, 0, 1), PxVec3(1, 0, 0)};
	const float psi[4] = {0.f, 90.f, 180.f, -90.f};
	PxMat33 tilt(PxVec3(1, 0, 0), PxVec3(0, 0, -1), PxVec3(0, 1, 0));  // Euler(-90, 0, 0): y -> -z, z -> y
	for(int k = 0; k < 4; k++)
	{
		PxQuat rot(root * yaw(psi[k]) * tilt);
		c.upper[k] = makeLeg(scene, PxTransform(origin + root * (0.9f * dirs[k]), rot), UPPER_HALF, 0.f, 3.f);
		c.lower[k] = makeLeg(scene, PxTransform(origin + root * (1.98f * dirs[k]), rot), LOWER_HALF, LOWER_CENTRE, 1.f);
		c.hip[k] = makeJoint(c.body, c.upper[k], HIP);
		c.hip[k]->setMotion(PxD6Axis::eTWIST, PxD6Motion::eLIMITED);
		c.hip[k]->setMotion(PxD6Axis::eSWING1, PxD6Motion::eLIMITED);
		// Unity: locked (see LOCKED_LIMIT)
		c.hip[k]->setMotion(PxD6Axis::eSWING2, gOpt.lockedTwistSwing ? PxD6Motion::eLOCKED : PxD6Motion::eLIMITED);
		c.hip[k]->setTwistLimit(PxJointAngularLimitPair(0.f, 60.f * DEG));  // about +x: lifting the leg
		c.hip[k]->setSwingLimit(PxJointLimitCone(20.f * DEG, LOCKED_LIMIT));
		c.knee[k] = makeJoint(c.upper[k], c.lower[k], KNEE);
		c.knee[k]->setMotion(PxD6Axis::eTWIST, PxD6Motion::eLIMITED);
		const PxD6Motion::Enum kneeSwing = gOpt.lockedTwistSwing ? PxD6Motion::eLOCKED : PxD6Motion::eLIMITED;
		c.knee[k]->setMotion(PxD6Axis::eSWING1, kneeSwing);  // Unity: locked
		c.knee[k]->setMotion(PxD6Axis::eSWING2, kneeSwing);
		c.knee[k]->setTwistLimit(PxJointAngularLimitPair(-150.f * DEG, 0.f));  // about +x: lowering the foot
		c.knee[k]->setSwingLimit(PxJointLimitCone(LOCKED_LIMIT, LOCKED_LIMIT));
		setDrives(c, k, 0.f, 0.f, 0.f, 0.f);  // no drive until the first action (SetupBodyPart sets none)
	}
	c.start.push_back(c.body->getGlobalPose());
	for(int k = 0; k < 4; k++) { c.start.push_back(c.upper[k]->getGlobalPose()); c.start.push_back(c.lower[k]->getGlobalPose()); }
	return c;
}

void reset(Crawler& c)
{
	PxRigidDynamic* parts[9] = {c.body, c.upper[0], c.lower[0], c.upper[1], c.lower[1], c.upper[2], c.lower[2], c.upper[3], c.lower[3]};
	for(int p = 0; p < 9; p++)
	{
		parts[p]->setGlobalPose(c.start[p]);
		parts[p]->setLinearVelocity(PxVec3(0));
		parts[p]->setAngularVelocity(PxVec3(0));
	}
}

// Actions as crawler/environment.py reads them: x targets of hips (0, 2, 4, 6) over [-60, 0] (MuJoCo's
// hinge about -x: here a twist about +x of the opposite sign), y targets (1, 3, 5, 7) over [-20, 20],
// knees (8-11) over [0, 150], strengths (12-19): (s + 1) / 2 of 10000.
void act(Crawler& c, const double* a)
{
	for(int k = 0; k < 4; k++)
	{
		double tx = std::fmin(std::fmax((a[2 * k] + 1) / 2, 0.0), 1.0), ty = std::fmin(std::fmax((a[2 * k + 1] + 1) / 2, 0.0), 1.0);
		double tk = std::fmin(std::fmax((a[8 + k] + 1) / 2, 0.0), 1.0);
		float hipX = float(-60.0 + 60.0 * tx) * DEG, hipY = float(-20.0 + 40.0 * ty) * DEG, knee = float(150.0 * tk) * DEG;
		PxQuat hip;
		if(gOpt.hipYPlus)
		{
			// ML-Agents 0.4.0, JointDriveController.SetJointTargetRotation: xRot, yRot lerped over the
			// limits, targetRotation = Quaternion.Euler(xRot, yRot, 0), i.e. Ry(yRot) Rx(xRot) (Unity's
			// Euler turns about z, then x, then y). Unity's ConfigurableJoint drives the joint frame
			// (axis (1, 0, 0), secondary axis (0, 0, -1): x the leg's x, y its -z) to the inverse of
			// targetRotation, Rx(-xRot) Ry(-yRot) in that frame: the leg turns by Rx(-xRot) Rz(+yRot)
			// about its own axes. PhysX's drive position is the child's joint frame in the parent's.
			hip = PxQuat(-hipX, PxVec3(1, 0, 0)) * PxQuat(-hipY, PxVec3(0, 1, 0));
		}
		else  // the committed reference's: Ry(+yRot) Rx(-xRot) in the joint frame (crawler/mjcf.py's hinges)
			hip = PxQuat(hipY, PxVec3(0, 1, 0)) * PxQuat(-hipX, PxVec3(1, 0, 0));
		c.hip[k]->setDrivePosition(PxTransform(PxVec3(0), hip));
		c.knee[k]->setDrivePosition(PxTransform(PxVec3(0), PxQuat(-knee, PxVec3(1, 0, 0))));
		float up = float((a[12 + k] + 1) / 2 * MAXF), low = float((a[16 + k] + 1) / 2 * MAXF);  // not clipped
		setDrives(c, k, SPRING, DAMPER, up, low);
	}
}

float lowest(PxRigidDynamic* b, float half, float centre)  // the capsule's lowest point
{
	PxTransform t = b->getGlobalPose();
	PxVec3 axis = t.q.rotate(PxVec3(0, 1, 0)), mid = t.transform(PxVec3(0, centre, 0));
	return mid.y - std::fabs(axis.y) * half - LEG_R;
}

bool fell(const Crawler& c)
{
	if(c.body->getGlobalPose().p.y - BODY_R - GROUND <= gOpt.contactOffset) return true;
	for(int k = 0; k < 4; k++)
		if(lowest(c.upper[k], UPPER_HALF, 0.f) - GROUND <= gOpt.contactOffset) return true;
	return false;
}

double stepReward(const Crawler& c)
{
	PxTransform t = c.body->getGlobalPose();
	PxVec3 d = PxVec3(1175.f, 4.f, 0.f) - t.p;
	d.normalize();
	PxVec3 forward = t.q.rotate(PxVec3(0, 0, 1));
	return 0.03 * c.body->getLinearVelocity().dot(d) + 0.01 * forward.dot(d);
}

void put(double* out, const PxVec3& v) { out[0] = v.x; out[1] = v.y; out[2] = v.z; }

// crawler/mjcf.py's sensor row (SENSOR_SLICES) of the crawler's current state.
void sense(const Crawler& c, double* row)
{
	const PxRigidDynamic* parts[9] = {c.body, c.upper[0], c.lower[0], c.upper[1], c.lower[1], c.upper[2], c.lower[2], c.upper[3], c.lower[3]};
	for(int p = 0; p < 9; p++)
	{
		PxTransform t = parts[p]->getGlobalPose();
		put(row + 3 * p, t.p);  // pos
		put(row + 27 + 3 * p, t.q.rotate(PxVec3(0, 1, 0)));  // yaxis
		put(row + 63 + 3 * p, parts[p]->getLinearVelocity());  // com_vel: PhysX's is the centre of mass's
		put(row + 90 + 3 * p, parts[p]->getAngularVelocity());  // omega
	}
	PxQuat q = c.body->getGlobalPose().q;
	put(row + 54, q.rotate(PxVec3(1, 0, 0)));  // root_xaxis
	put(row + 57, q.rotate(PxVec3(0, 0, 1)));  // root_zaxis
	put(row + 60, c.body->getLinearVelocity());  // root_vel: a sphere's origin is its centre of mass
}

bool readAll(void* buffer, size_t bytes) { return std::fread(buffer, 1, bytes, stdin) == bytes; }

bool writeAll(const std::vector<double>& values)
{
	return std::fwrite(values.data(), sizeof(double), values.size(), stdout) == values.size() && std::fflush(stdout) == 0;
}

// The --serve loop (the protocol in the header). Exit status: 0 on 'Q' or end of input, 3 on a
// short read or a failed write, 4 on an unknown opcode.
int serve(PxScene* scene, std::vector<Crawler>& crawlers)
{
	const size_t n = crawlers.size();
	std::vector<unsigned char> mask(n);
	std::vector<double> actions(n * ACTION_SIZE), rows(n * SENSOR_SIZE), record(n * (PHYSICS_STEPS + 1) * SENSOR_SIZE);
	std::vector<double> state(n * 9 * 13);
	for(;;)
	{
		int op = std::getchar();
		if(op == EOF) return 0;
		if(op == 'Q') return 0;
		if(op == 'R')
		{
			if(!readAll(mask.data(), n)) { std::fprintf(stderr, "crawler_physx: short 'R' mask\n"); return 3; }
			for(size_t i = 0; i < n; i++)
			{
				if(mask[i]) reset(crawlers[i]);
				sense(crawlers[i], &rows[i * SENSOR_SIZE]);
			}
			if(!writeAll(rows)) return 3;
		}
		else if(op == 'S')
		{
			if(!readAll(actions.data(), actions.size() * sizeof(double))) { std::fprintf(stderr, "crawler_physx: short 'S' actions\n"); return 3; }
			for(size_t i = 0; i < n; i++) act(crawlers[i], &actions[i * ACTION_SIZE]);
			for(int j = 0; j <= PHYSICS_STEPS; j++)
			{
				for(size_t i = 0; i < n; i++) sense(crawlers[i], &record[(i * (PHYSICS_STEPS + 1) + size_t(j)) * SENSOR_SIZE]);
				if(j == PHYSICS_STEPS) break;
				scene->simulate(DT);
				scene->fetchResults(true);
			}
			if(!writeAll(record)) return 3;
		}
		else if(op == 'G' || op == 'P')
		{
			if(op == 'P' && !readAll(state.data(), state.size() * sizeof(double))) { std::fprintf(stderr, "crawler_physx: short 'P' state\n"); return 3; }
			for(size_t i = 0; i < n; i++)
			{
				PxRigidDynamic* parts[9] = {crawlers[i].body, crawlers[i].upper[0], crawlers[i].lower[0], crawlers[i].upper[1], crawlers[i].lower[1],
				                            crawlers[i].upper[2], crawlers[i].lower[2], crawlers[i].upper[3], crawlers[i].lower[3]};
				for(int p = 0; p < 9; p++)
				{
					double* s = &state[(i * 9 + size_t(p)) * 13];
					if(op == 'G')
					{
						PxTransform t = parts[p]->getGlobalPose();
						put(s, t.p);
						s[3] = t.q.x; s[4] = t.q.y; s[5] = t.q.z; s[6] = t.q.w;
						put(s + 7, parts[p]->getLinearVelocity());
						put(s + 10, parts[p]->getAngularVelocity());
					}
					else
					{
						parts[p]->setGlobalPose(PxTransform(PxVec3(float(s[0]), float(s[1]), float(s[2])),
						                                    PxQuat(float(s[3]), float(s[4]), float(s[5]), float(s[6]))));
						parts[p]->setLinearVelocity(PxVec3(float(s[7]), float(s[8]), float(s[9])));
						parts[p]->setAngularVelocity(PxVec3(float(s[10]), float(s[11]), float(s[12])));
					}
				}
				sense(crawlers[i], &rows[i * SENSOR_SIZE]);
			}
			if(!writeAll(op == 'G' ? state : rows)) return 3;
		}
		else { std::fprintf(stderr, "crawler_physx: unknown opcode %d\n", op); return 4; }
	}
}

bool choice(const char* value, const char* a, const char* b, bool& isB)
{
	if(std::strcmp(value, a) == 0) isB = false;
	else if(std::strcmp(value, b) == 0) isB = true;
	else return false;
	return true;
}
}  // namespace

int main(int argc, char** argv)
{
	int episodes = 20, decisions = 1000;
	uint64_t seed = 0;
	std::string policies = "still,stand,uniform,gauss";
	bool serving = false;
	int agents = 1;
	for(int i = 1; i < argc; i++)
	{
		std::string a = argv[i];
		if(a == "--serve") serving = true;
		else if(a == "--agents" && i + 1 < argc) agents = std::atoi(argv[++i]);
		else if(a == "--hip-y-sign" && i + 1 < argc && choice(argv[i + 1], "minus", "plus", gOpt.hipYPlus)) i++;
		else if(a == "--drive-limits" && i + 1 < argc && choice(argv[i + 1], "force", "impulse", gOpt.driveImpulse)) i++;
		else if(a == "--locked" && i + 1 < argc && choice(argv[i + 1], "tiny-limit", "locked-twist-swing", gOpt.lockedTwistSwing)) i++;
		else if(a == "--contact-offset" && i + 1 < argc)
		{
			gOpt.contactOffset = std::strtof(argv[++i], nullptr);
			gOpt.groundOffset = true;
			if(!(gOpt.contactOffset > 0.f)) { std::fprintf(stderr, "--contact-offset must be > 0 (the rest offset is 0)\n"); return 2; }
		}
		else if(a == "--iters" && i + 2 < argc)
		{
			gOpt.positionIters = std::atoi(argv[++i]);
			gOpt.velocityIters = std::atoi(argv[++i]);
			if(gOpt.positionIters < 1 || gOpt.positionIters > 255 || gOpt.velocityIters < 1 || gOpt.velocityIters > 255)
			{ std::fprintf(stderr, "--iters P V: each 1 to 255\n"); return 2; }
		}
		else if(a == "--episodes" && i + 1 < argc) episodes = std::atoi(argv[++i]);
		else if(a == "--decisions" && i + 1 < argc) decisions = std::atoi(argv[++i]);
		else if(a == "--seed" && i + 1 < argc) seed = std::strtoull(argv[++i], nullptr, 10);
		else if(a == "--policies" && i + 1 < argc) policies = argv[++i];
		else { std::fprintf(stderr, "unknown option or value: %s\n", a.c_str()); return 2; }
	}
	if(agents < 1) { std::fprintf(stderr, "--agents must be at least 1\n"); return 2; }
	PxFoundation* foundation = PxCreateFoundation(PX_PHYSICS_VERSION, gAlloc, gErr);
	gPhysics = PxCreatePhysics(PX_PHYSICS_VERSION, *foundation, PxTolerancesScale(), false, nullptr);
	PxInitExtensions(*gPhysics, nullptr);
	gMat = gPhysics->createMaterial(0.6f, 0.6f, 0.f);
	PxSceneDesc sd(gPhysics->getTolerancesScale());
	sd.gravity = PxVec3(0, -9.81f, 0);
	sd.cpuDispatcher = PxDefaultCpuDispatcherCreate(0);
	sd.filterShader = PxDefaultSimulationFilterShader;
	sd.solverType = PxSolverType::ePGS;
	sd.bounceThresholdVelocity = 2.f;
	PxScene* scene = gPhysics->createScene(sd);
	PxRigidStatic* ground = PxCreatePlane(*gPhysics, PxPlane(0, 1, 0, -GROUND), *gMat);
	if(gOpt.groundOffset)  // else PhysX's default (0.02), as the committed reference ran
	{
		PxShape* plane;
		ground->getShapes(&plane, 1);
		plane->setContactOffset(gOpt.contactOffset);
	}
	scene->addActor(*ground);
	if(serving)
	{
		std::vector<Crawler> crawlers;
		for(int i = 0; i < agents; i++) crawlers.push_back(build(scene, PxVec3(-200.f, 2.1f, -300.f + 50.f * float(i))));
		return serve(scene, crawlers);
	}
	Crawler c = build(scene, PxVec3(-200.f, 2.1f, 0.f));
	size_t from = 0;
	while(from <= policies.size())
	{
		size_t to = policies.find(',', from);
		std::string policy = policies.substr(from, to == std::string::npos ? std::string::npos : to - from);
		from = to == std::string::npos ? policies.size() + 1 : to + 1;
		bool scripted = policy == "still" || policy == "stand";
		for(int e = 0; e < (scripted ? 1 : episodes); e++)
		{
			Rng rng(seed + uint64_t(e));  // episode e's actions: the stream crawler/fidelity.py gives agent e
			reset(c);
			double a[20] = {0}, reward = 0, height30 = 0, speedmax = 0;
			for(int k = 0; k < 4; k++) setDrives(c, k, 0.f, 0.f, 0.f, 0.f);
			int n = 0;
			bool down = false;
			for(n = 1; n <= decisions && !down; n++)
			{
				for(int i = 0; i < 20; i++)
				{
					if(policy == "still") a[i] = i < 12 ? 0.0 : -1.0;
					else if(policy == "stand") a[i] = i < 8 ? (i % 2 ? 0.0 : 1.0) : (i < 12 ? 0.0 : 1.0);
					else if(policy == "uniform") a[i] = 2.0 * rng.uni() - 1.0;
					else a[i] = std::fmin(std::fmax(rng.normal(), -1.0), 1.0);
				}
				act(c, a);
				double r = 0;
				for(int j = 0; j < 5 && !down; j++)
				{
					r += stepReward(c);
					scene->simulate(DT);
					scene->fetchResults(true);
					down = fell(c);
				}
				reward += down ? -1.0 : r;
				float y = c.body->getGlobalPose().p.y;
				if(n == 30) height30 = y;
				speedmax = std::fmax(speedmax, c.body->getLinearVelocity().magnitude());
				if(scripted)  // the body's height; legs 0's hip and knee angles as crawler/mjcf.py's hinges (degrees)
					std::printf("TRACE %s %d %.5f %.3f %.3f\n", policy.c_str(), n, y, -c.hip[0]->getTwistAngle() / DEG,
					            -c.knee[0]->getTwistAngle() / DEG);
			}
			std::printf("EPISODE %s %d %d %d %.5f %.5f %.5f\n", policy.c_str(), e, n - 1, down ? 1 : 0, reward, height30, speedmax);
		}
	}
	return 0;
}
