"""The physical fabric: floor and racks, cable routes and labels, media per cable, the bill."""
