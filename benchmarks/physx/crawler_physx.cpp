// crawler_physx.cpp: the Crawler of crawler/ (ML-Agents' CrawlerStaticTarget, mid-2018) built in
// PhysX 4.1 the way Unity 2018 builds it, for the fidelity check of docs/crawler.md.
//
// One crawler per run of a policy, the numbers of crawler/scene.py: a sphere body and four legs of
// two capsules, joined by D6 joints (a hip: twist limited and swing1 limited, a knee: twist only)
// with a slerp drive of spring 40000 and damper 3000 whose force limit is the agent's strength
// (drive limits as forces); PGS, 12 position and 12 velocity iterations, dt 0.01333, 5 physics
// steps per decision, max angular velocity 100, angular damping 0.05, friction 0.6, contact offset
// 0.01. A decision's reward sums, over its physics steps, 0.03 v.d + 0.01 f.d from the state before
// the step; a body or upper leg within the contact offset of the ground (y = 0.5) after a step ends
// the episode with -1. Episode e's actions come from splitmix64 seeded seed + e (crawler/fidelity.py draws the same).
//
// Policies: still (no drive), stand (hips level, knees 75 degrees, full strength),
// uniform (U(-1, 1) actions), gauss (clipped N(0, 1)).
// Output: one line per episode: "EPISODE policy k decisions fell reward height30 speedmax",
// and for still/stand the body's height and leg 0's hip and knee angles per decision
// ("TRACE policy decision height hip knee").
// Usage: crawler_physx [--episodes N] [--decisions N] [--seed S] [--policies a,b]

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
const float LOCKED_LIMIT = 0.01f * 3.14159265358979f / 180.f;

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
PxDefaultErrorCallback gErr;
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
	s->setContactOffset(OFFSET);
	s->setRestOffset(0.f);
	PxRigidBodyExt::setMassAndUpdateInertia(*b, mass);
	b->setSolverIterationCounts(12, 12);
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
	j->setConstraintFlag(PxConstraintFlag::eDRIVE_LIMITS_ARE_FORCES, true);
	return j;
}

Crawler build(PxScene* scene)
{
	Crawler c;
	PxMat33 root = yaw(45.f);
	PxVec3 origin(-200.f, 2.1f, 0.f);
	PxTransform bodyPose(origin + root * PxVec3(0, 0.15f, 0), PxQuat(root * yaw(45.f)));
	c.body = gPhysics->createRigidDynamic(bodyPose);
	PxShape* s = PxRigidActorExt::createExclusiveShape(*c.body, PxSphereGeometry(BODY_R), *gMat);
	s->setContactOffset(OFFSET);
	s->setRestOffset(0.f);
	PxRigidBodyExt::setMassAndUpdateInertia(*c.body, 1.f);
	c.body->setSolverIterationCounts(12, 12);
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
		c.hip[k]->setMotion(PxD6Axis::eSWING2, PxD6Motion::eLIMITED);  // Unity: locked (see LOCKED_LIMIT)
		c.hip[k]->setTwistLimit(PxJointAngularLimitPair(0.f, 60.f * DEG));  // about +x: lifting the leg
		c.hip[k]->setSwingLimit(PxJointLimitCone(20.f * DEG, LOCKED_LIMIT));
		c.knee[k] = makeJoint(c.upper[k], c.lower[k], KNEE);
		c.knee[k]->setMotion(PxD6Axis::eTWIST, PxD6Motion::eLIMITED);
		c.knee[k]->setMotion(PxD6Axis::eSWING1, PxD6Motion::eLIMITED);  // Unity: locked
		c.knee[k]->setMotion(PxD6Axis::eSWING2, PxD6Motion::eLIMITED);
		c.knee[k]->setTwistLimit(PxJointAngularLimitPair(-150.f * DEG, 0.f));  // about +x: lowering the foot
		c.knee[k]->setSwingLimit(PxJointLimitCone(LOCKED_LIMIT, LOCKED_LIMIT));
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
		PxQuat twist(-hipX, PxVec3(1, 0, 0)), swing(hipY, PxVec3(0, 1, 0));
		c.hip[k]->setDrivePosition(PxTransform(PxVec3(0), swing * twist));
		c.knee[k]->setDrivePosition(PxTransform(PxVec3(0), PxQuat(-knee, PxVec3(1, 0, 0))));
		float up = float((a[12 + k] + 1) / 2 * MAXF), low = float((a[16 + k] + 1) / 2 * MAXF);
		c.hip[k]->setDrive(PxD6Drive::eSLERP, PxD6JointDrive(SPRING, DAMPER, up, false));
		c.knee[k]->setDrive(PxD6Drive::eSLERP, PxD6JointDrive(SPRING, DAMPER, low, false));
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
	if(c.body->getGlobalPose().p.y - BODY_R - GROUND <= OFFSET) return true;
	for(int k = 0; k < 4; k++)
		if(lowest(c.upper[k], UPPER_HALF, 0.f) - GROUND <= OFFSET) return true;
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
}  // namespace

int main(int argc, char** argv)
{
	int episodes = 20, decisions = 1000;
	uint64_t seed = 0;
	std::string policies = "still,stand,uniform,gauss";
	for(int i = 1; i < argc; i++)
	{
		std::string a = argv[i];
		if(a == "--episodes" && i + 1 < argc) episodes = std::atoi(argv[++i]);
		else if(a == "--decisions" && i + 1 < argc) decisions = std::atoi(argv[++i]);
		else if(a == "--seed" && i + 1 < argc) seed = std::strtoull(argv[++i], nullptr, 10);
		else if(a == "--policies" && i + 1 < argc) policies = argv[++i];
		else { std::fprintf(stderr, "unknown option %s\n", a.c_str()); return 2; }
	}
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
	scene->addActor(*ground);
	Crawler c = build(scene);
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
			for(int k = 0; k < 4; k++) { c.hip[k]->setDrive(PxD6Drive::eSLERP, PxD6JointDrive(0, 0, 0, false)); c.knee[k]->setDrive(PxD6Drive::eSLERP, PxD6JointDrive(0, 0, 0, false)); }
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
