/**
 * Geo math of GEOPOINT fields: what a point is, great-circle distances (haversine) and whether a
 * point lies within a radius or a bounding box. Shared by both engines' filters and sorts and by the
 * checks of documents and queries.
 */
import type { GeoPoint } from './engine';

/** Mean radius of the earth in meters, as Typesense's S2 geometry measures it. */
export const EARTH_RADIUS_METERS = 6_371_010;
/** Half the earth's circumference: no two points are farther apart; a larger radius means nothing more. */
export const MAX_DISTANCE_METERS = Math.PI * EARTH_RADIUS_METERS;
export const METERS_PER_UNIT = { km: 1000, mi: 1609.344 } as const;

const isCoordinate = (value: unknown, limit: number): value is number =>
  typeof value === 'number' && Number.isFinite(value) && value >= -limit && value <= limit;

export const isLatitude = (value: unknown): value is number => isCoordinate(value, 90);
export const isLongitude = (value: unknown): value is number => isCoordinate(value, 180);

/**
 * A point from a document value, `{lat, lng}` (no other keys) or `[lat, lng]` as Typesense takes
 * it, in range; undefined otherwise.
 */
export function geoPointOf(value: unknown): GeoPoint | undefined {
  let lat: unknown;
  let lng: unknown;
  if (Array.isArray(value)) {
    if (value.length !== 2) return undefined;
    [lat, lng] = value;
  } else if (typeof value === 'object' && value !== null) {
    const keys = Object.keys(value);
    if (keys.length !== 2 || !('lat' in value) || !('lng' in value)) return undefined;
    ({ lat, lng } = value as { lat: unknown; lng: unknown });
  } else return undefined;
  return isLatitude(lat) && isLongitude(lng) ? { lat, lng } : undefined;
}

const RADIANS = Math.PI / 180;

/** The great-circle distance between two points in meters (haversine). */
export function distanceMeters(a: GeoPoint, b: GeoPoint): number {
  const dLat = (b.lat - a.lat) * RADIANS;
  const dLng = (b.lng - a.lng) * RADIANS;
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(a.lat * RADIANS) * Math.cos(b.lat * RADIANS) * Math.sin(dLng / 2) ** 2;
  // Rounding can take h a hair above 1 for antipodal points.
  return 2 * EARTH_RADIUS_METERS * Math.asin(Math.sqrt(Math.min(1, h)));
}

/** Whether `point` is within `meters` of `center`. */
export const withinRadius = (point: GeoPoint, center: GeoPoint, meters: number) =>
  distanceMeters(point, center) <= meters;

/** A box by its south-west and north-east corners; `west > east` crosses the 180th meridian. */
export interface GeoBox {
  south: number;
  west: number;
  north: number;
  east: number;
}

/** Whether `point` lies in the box, edges included. */
export function insideBox(point: GeoPoint, box: GeoBox): boolean {
  if (point.lat < box.south || point.lat > box.north) return false;
  return box.west <= box.east
    ? point.lng >= box.west && point.lng <= box.east
    : point.lng >= box.west || point.lng <= box.east;
}
